import type { Database } from './client.js';
import { createAgentRunRepository } from './repositories/agent-runs.js';
import { createBankRepository } from './repositories/bank.js';
import { createDecisionCardRepository } from './repositories/decision-cards.js';
import { createDigestRepository } from './repositories/digests.js';
import { createEvaluationRepository } from './repositories/evaluations.js';
import { createQuestionLookupRepository } from './repositories/question-lookup.js';
import { createQuestionRepository } from './repositories/questions.js';
import { createRunRepository } from './repositories/runs.js';
import { createSlackEventRepository } from './repositories/slack-events.js';
import { createTranscriptRepository } from './repositories/transcript.js';

/** Every repository over one database. */
export function createStore(db: Database) {
  return {
    db,
    runs: createRunRepository(db),
    transcript: createTranscriptRepository(db),
    evaluations: createEvaluationRepository(db),
    questions: createQuestionRepository(db),
    bank: createBankRepository(db),
    slackEvents: createSlackEventRepository(db),
    digests: createDigestRepository(db),
    agentRuns: createAgentRunRepository(db),
    questionLookup: createQuestionLookupRepository(db),
    decisionCards: createDecisionCardRepository(db),
  };
}

export type Store = ReturnType<typeof createStore>;
