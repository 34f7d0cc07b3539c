import os from 'node:os';
import type { Command } from 'commander';
import { UserInputError } from '../../core/errors.js';
import { KINDS, promoteQuestion, TRIGGERS } from '../../questions/index.js';
import { writeLine, type CliContext } from '../context.js';
import { bankDirOf, withStore, type BankGlobalOptions } from './bank-shared.js';

interface PromoteCliOptions {
  kind: string;
  triggers: string;
  id?: string;
  by?: string;
  text?: string;
}

function currentUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'terminal';
  }
}

export function registerBankPromote(bank: Command, ctx: CliContext): void {
  bank
    .command('promote')
    .description("Add a person's question (by its id in the questions table) to the bank")
    .argument('<question-id>', 'the id of the question a person asked')
    .requiredOption('--kind <kind>', `${KINDS.join(' | ')}`)
    .requiredOption('--triggers <list>', `comma-separated: ${TRIGGERS.join(', ')}`)
    .option('--id <bank-id>', 'the bank id (default: made from the question)')
    .option('--by <name>', 'who promotes it (default: your login name)')
    .option('--text <question>', "a cleaned-up wording (the person's original stays with the run)")
    .action(async (questionId: string, opts: PromoteCliOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<BankGlobalOptions & PromoteCliOptions>();
      if (!/^\d+$/.test(questionId)) throw new UserInputError(`The question id must be a number (the questions table's id), got '${questionId}'.`);
      const entry = await withStore(ctx, (store) =>
        promoteQuestion(store, Number(questionId), {
          kind: opts.kind,
          triggers: opts.triggers.split(','),
          by: opts.by ?? currentUser(),
          dir: bankDirOf(ctx, globals),
          ...(opts.id !== undefined ? { id: opts.id } : {}),
          ...(opts.text !== undefined ? { text: opts.text } : {}),
        }),
      );
      if (globals.json) {
        writeLine(ctx.stdout, JSON.stringify(entry, null, 2));
      } else {
        writeLine(ctx.stdout, `Promoted question ${questionId} as bank entry '${entry.id}' (${entry.kind}; ${entry.triggers.join(', ')}):`);
        writeLine(ctx.stdout, `  ${entry.text}`);
        writeLine(ctx.stdout, "It is asked from now on; 'kernelseek bank export' writes promoted entries as YAML to commit under questions/.");
      }
    });
}
