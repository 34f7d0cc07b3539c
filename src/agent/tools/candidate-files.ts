import path from 'node:path';
import { isFolderName, readCandidate, type CandidateFiles, type KernelLayout, type ReadText } from '../../harness/candidate.js';
import type { LoadedTask } from '../../harness/tasks.js';
import { readTextBeneath } from '../../core/safe-read.js';
import { MAX_SOURCE_BYTES } from '../../queue/payloads.js';
import type { Workspace } from '../workspace/workspace.js';

/**
 * How the evaluate tool reads a candidate's file from the workspace: the agent may have planted a
 * symlink to a trusted file, a FIFO, a device or a huge file there, so each file is opened beneath
 * the workspace without following a link, judged before it is read (src/core/safe-read.ts), and
 * must be text. A folder's symlinks and other files are left out already (readCandidateFolder).
 */
export function workspaceTextReader(workspace: Workspace): ReadText {
  return (file) => {
    const relative = path.relative(workspace.dir, file);
    return readTextBeneath(workspace.dir, relative, { maxBytes: MAX_SOURCE_BYTES, shown: relative });
  };
}

/** The candidate's files as the harness receives them (one file by its name, or the folder's files). */
export async function readWorkspaceCandidate(workspace: Workspace, layout: KernelLayout): Promise<CandidateFiles> {
  return readCandidate(path.join(workspace.dir, layout.name), layout, workspaceTextReader(workspace));
}

/** The candidate's layout: the task's, or, for a task loaded without one, the workspace's kernel file's. */
export function layoutOf(task: Partial<Pick<LoadedTask, 'layout'>> & { task: { kernel?: { language?: string } } }, workspace: Workspace): KernelLayout {
  if (task.layout) return task.layout;
  const language = task.task.kernel?.language;
  return { name: workspace.kernelFile.replace(/\/+$/, ''), folder: isFolderName(workspace.kernelFile), language: language === 'cuda' || language === 'triton' ? language : 'cpp' };
}
