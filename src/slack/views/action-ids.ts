/** Block Kit action ids: the buttons the views draw and the listeners answer. */
export const ACTION_IDS = {
  askBank: 'ks_ask_bank',
  stopRun: 'ks_stop_run',
  promoteQuestion: 'ks_promote_question',
  exportResult: 'ks_export_result',
  openPullRequest: 'ks_open_pull_request',
  /** One of a decision card's offered choices (value `<card id>:<choice id>`). */
  answerChoice: 'ks_answer_choice',
  /** *Reply…* on a decision card: opens a form bound to that card (value: the card id). */
  answerReply: 'ks_answer_reply',
  /** *Continue from best* on a run's final card (value: the run id). */
  continueRun: 'ks_continue_run',
} as const;

/** The form that answers one decision card. */
export const ANSWER_MODAL_ID = 'ks_answer_card';

/** Reactions on a "question asked" message that promote the question into the bank. */
export const PROMOTE_REACTIONS = ['bank', 'star'] as const;
