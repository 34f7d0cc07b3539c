import path from 'node:path';
import { readCandidate, readPlainText, type CandidateFiles, type ReadText } from '../../harness/candidate.js';
import type { LoadedTask } from '../../harness/tasks.js';
import type { Workspace } from '../workspace/workspace.js';

/**
 * How the evaluate tool reads a candidate from the workspace: the one place it does, so that a
 * reader that refuses what the agent may have planted (links to trusted files) replaces the plain one
 * here. A folder's symlinks and other files are left out already (readCandidateFolder).
 */
export const readWorkspaceText: ReadText = readPlainText;

/** The candidate's files as the harness receives them (one file by its name, or the folder's files). */
export async function readWorkspaceCandidate(workspace: Workspace, task: LoadedTask): Promise<CandidateFiles> {
  return readCandidate(path.join(workspace.dir, task.layout.name), task.layout, readWorkspaceText);
}
