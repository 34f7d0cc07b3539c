/** Block Kit action ids: the buttons the views draw and the listeners answer. */
export const ACTION_IDS = {
  askBank: 'ks_ask_bank',
  stopRun: 'ks_stop_run',
  promoteQuestion: 'ks_promote_question',
  exportResult: 'ks_export_result',
  openPullRequest: 'ks_open_pull_request',
} as const;

/** Reactions on a "question asked" message that promote the question into the bank. */
export const PROMOTE_REACTIONS = ['bank', 'star'] as const;
