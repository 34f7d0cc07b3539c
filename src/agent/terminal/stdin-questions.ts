import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { AgentEngine } from '../engine.js';

/**
 * Questions typed on standard input. A line is a person's question (at a decision point it answers
 * it; otherwise it is delivered at the next turn boundary); an empty line at a decision point asks
 * the bank at once. Returns a function that stops listening.
 */
export function listenForQuestions(input: Readable, engine: AgentEngine, runId: string, options: { author: string; report: (text: string) => void }): () => void {
  const rl = createInterface({ input, terminal: false });
  let n = 0;
  rl.on('line', (raw) => {
    const text = raw.trim();
    void (async () => {
      try {
        if (text === '') {
          const status = await engine.getStatus(runId);
          if (status.waitingFor) {
            await engine.askFromBankNow(runId);
            options.report('asking the question bank now');
          }
          return;
        }
        n += 1;
        const submitted = await engine.submitQuestion(runId, { text, author: options.author, idempotencyKey: `stdin:${n}` });
        options.report(submitted.delivery === 'answers_decision' ? 'question sent' : 'question queued for the next turn');
      } catch (error) {
        options.report(`could not send the question: ${(error as Error).message}`);
      }
    })();
  });
  return () => rl.close();
}
