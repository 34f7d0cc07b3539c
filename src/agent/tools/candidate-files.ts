import path from 'node:path';
import { isFolderName, readCandidate, readPlainText, type CandidateFiles, type KernelLayout, type ReadText } from '../../harness/candidate.js';
import type { LoadedTask } from '../../harness/tasks.js';
import type { Workspace } from '../workspace/workspace.js';

/**
 * How the evaluate tool reads a candidate from the workspace: the one place it does, so that a
 * reader that refuses what the agent may have planted (links to trusted files) replaces the plain one
 * here. A folder's symlinks and other files are left out already (readCandidateFolder).
 */
export const readWorkspaceText: ReadText = readPlainText;

/** The candidate's files as the harness receives them (one file by its name, or the folder's files). */
export async function readWorkspaceCandidate(workspace: Workspace, layout: KernelLayout): Promise<CandidateFiles> {
  return readCandidate(path.join(workspace.dir, layout.name), layout, readWorkspaceText);
}

/** The candidate's layout: the task's, or, for a task loaded without one, the workspace's kernel file's. */
export function layoutOf(task: Partial<Pick<LoadedTask, 'layout'>> & { task: { kernel?: { language?: string } } }, workspace: Workspace): KernelLayout {
  if (task.layout) return task.layout;
  const language = task.task.kernel?.language;
  return { name: workspace.kernelFile.replace(/\/+$/, ''), folder: isFolderName(workspace.kernelFile), language: language === 'cuda' || language === 'triton' ? language : 'cpp' };
}
