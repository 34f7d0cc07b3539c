/** The decision points of DESIGN §7; the question bank uses the same ids. */
export const DECISION_TRIGGERS = ['plateau', 'claimed_limit', 'stopped', 'failing', 'target_reached'] as const;
export type DecisionTrigger = (typeof DECISION_TRIGGERS)[number];
