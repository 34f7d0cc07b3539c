import type { DecisionTrigger } from '../agent-port.js';

/**
 * The choices a decision card offers as buttons, per decision point. Each is a question a person
 * picks instead of writing one: like the bank's, it asks and supplies nothing (no technique, no
 * number), and it reaches the agent as that person's answer to the card, with the card's id.
 */
export interface DecisionChoice {
  id: string;
  /** The button's label. */
  label: string;
  /** What the agent is asked. */
  text: string;
}

export const DECISION_CHOICES: Record<DecisionTrigger, DecisionChoice[]> = {
  plateau: [{ id: 'where', label: 'Where does the time go?', text: 'Where does the remaining time go, and how would you know for sure?' }],
  claimed_limit: [{ id: 'challenge', label: 'Challenge the limit', text: 'What would you expect to measure if this were not the limit, and have you measured it?' }],
  stopped: [{ id: 'go_on', label: 'Keep going', text: 'What have you not tried yet that one evaluation could test?' }],
  failing: [{ id: 'step_back', label: 'Step back', text: 'What do the failing scenarios share that the passing ones do not?' }],
  target_reached: [{ id: 'further', label: 'Go further', text: 'The target is reached: what stands between this kernel and the fastest it could be?' }],
};

export function findChoice(trigger: string, id: string): DecisionChoice | undefined {
  return (DECISION_CHOICES as Record<string, DecisionChoice[]>)[trigger]?.find((c) => c.id === id);
}
