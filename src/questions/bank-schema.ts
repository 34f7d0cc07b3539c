import { z } from 'zod';

/** Decision points at which a run asks for a question (DESIGN §7). */
export const TRIGGERS = ['plateau', 'claimed_limit', 'stopped', 'failing', 'target_reached'] as const;
export const TriggerSchema = z.enum(TRIGGERS);
export type Trigger = z.infer<typeof TriggerSchema>;

/**
 * What a question does to the agent's direction: `layer_shift` moves it to a different layer of the
 * system; `limit_rejection` challenges a limit it claims to have reached.
 */
export const KINDS = ['layer_shift', 'limit_rejection'] as const;
export const KindSchema = z.enum(KINDS);
export type QuestionKind = z.infer<typeof KindSchema>;

/** Ids people type on the command line and see in Slack: lower-case words joined by hyphens. */
export const BankIdSchema = z
  .string()
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'must be lower-case words joined by hyphens, e.g. plateau-which-layer' })
  .max(64, { message: 'must be at most 64 characters' });

/** Where a promoted entry came from; written by `kernelseek bank export`, kept when committed. */
export const BankOriginSchema = z
  .object({
    question: z.number().int().positive().optional(),
    run: z.string().optional(),
    by: z.string().optional(),
    author: z.string().optional(),
  })
  .strict();
export type BankOrigin = z.infer<typeof BankOriginSchema>;

export const BankEntrySchema = z
  .object({
    id: BankIdSchema,
    kind: KindSchema,
    triggers: z.array(TriggerSchema).min(1, { message: 'must name at least one trigger' }),
    text: z.string().trim().min(1, { message: 'must not be empty' }),
    placeholders: z.array(z.string()).default([]),
    origin: BankOriginSchema.optional(),
  })
  .strict();
export type BankEntryInput = z.input<typeof BankEntrySchema>;

/** One bank question as the selector sees it, wherever it was stored. */
export interface BankEntry {
  id: string;
  kind: QuestionKind;
  triggers: Trigger[];
  text: string;
  placeholders: string[];
  /** `seed`: shipped YAML under questions/; `promoted`: a person's question added from the database. */
  source: 'seed' | 'promoted';
  origin?: BankOrigin;
  /** Where the entry is defined: `questions/layers.yaml:12`, or `database` for promoted entries. */
  location: string;
}

export const BANK_FILE_SCHEMA = 'kernelseek.bank/1';
export const TERMS_FILE_SCHEMA = 'kernelseek.terms/1';

export const BankFileSchema = z
  .object({
    schema: z.literal(BANK_FILE_SCHEMA),
    questions: z.array(z.unknown()),
  })
  .strict();

/**
 * The maintained list of words a bank question must not contain: naming a technique, an instruction,
 * a library or a hardware feature would supply information instead of asking.
 */
export const TermsFileSchema = z
  .object({
    schema: z.literal(TERMS_FILE_SCHEMA),
    terms: z.record(z.string(), z.array(z.string().trim().min(1, { message: 'must not be empty' }))),
  })
  .strict();
