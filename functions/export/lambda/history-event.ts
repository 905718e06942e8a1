/**
 * The history events (docs/operations.md: "History events"): `{"history": {...}}`, which the state machine of
 * infra/constructs/history-operations.ts starts with, is the *plan* (answer the table's export dates in batches);
 * the same request with the batch's `dates` beside it, `{"history": {...}, "dates": [...]}`, is a *batch* (run the
 * operation on those dates), so every operation's request reaches its batches as it was started; the same request
 * with `"finish": true` beside it is the *finish*, run once after every batch (a rewrite moves the registry then).
 * Strict and
 * bounded as the run's event is. A condition carries its value only as keyed digests (path/erase.ts DigestCondition): Step Functions keeps
 * every input in its execution history, so the value in clear never enters an event.
 */
import * as z from 'zod'
import { DigestConditionSchema, DigestSchema } from '../core/digest-condition.ts'
import { ConfigError, type ConfigProblem, quotePrefix } from '../core/errors.ts'
import { exportDateProblem } from '../core/export-date.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import { keyCheck } from '../normalize/personal-data.ts'
import { digestCondition, type ValueCondition } from '../path/erase.ts'

/** Dates one batch may name, and the largest batch a plan may ask for: a year of daily dates. */
export const MAX_BATCH_DATES = 366
/** Dates per batch when the plan event sets no `batchSize`: a few minutes of rewriting for a 1 GB daily table. */
export const DEFAULT_BATCH_DATES = 5
/** Conditions of one request: the values of the CLI's `--where` and `--where-file`, one per person. */
const MAX_CONDITIONS = 2000
/**
 * Bytes of a history event the CLI prints at most: half of Step Functions' 256 KiB for an execution's input and
 * state, which also hold the plan's batches and the batches' answers.
 */
export const MAX_HISTORY_EVENT_BYTES = 128 * 1024
const MAX_NAME = 256

/** The operations a history event may name; each is one entry of lambda/history.ts's table of operations. */
export const HistoryOperation = { ERASE: 'erase', REWRITE: 'rewrite' } as const
export type HistoryOperation = (typeof HistoryOperation)[keyof typeof HistoryOperation]
const OPERATION_NAMES = Object.values(HistoryOperation) as [HistoryOperation, ...HistoryOperation[]]

const DateSchema = z
  .string({ error: 'must be a date as YYYY-MM-DD' })
  .max(10, { error: 'must be a calendar date as YYYY-MM-DD', abort: true })
  .superRefine((text, ctx) => {
    const problem = exportDateProblem(text)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })

const HistorySchema = z.strictObject({
  operation: z.enum(OPERATION_NAMES, { error: `must be one of: ${OPERATION_NAMES.join(', ')}` }),
  table: z.string().min(1, 'must be a table id or name').max(MAX_NAME),
  where: z.array(DigestConditionSchema).min(1, 'must hold a condition').max(MAX_CONDITIONS).optional(),
  keyCheck: DigestSchema.describe(
    'The key check (normalize/personal-data.ts keyCheck): proves the digests were made with the deployed key',
  ),
  batchSize: z.int().min(1).max(MAX_BATCH_DATES).optional().describe("The plan's dates per batch"),
  keepVersions: z
    .literal(true, { error: 'must be true, or left out: the earlier versions are then deleted' })
    .optional()
    .describe("Leave the earlier object versions of the rewritten dates to the bucket's version expiry"),
})

const HistoryEventSchema = z.strictObject(
  {
    history: HistorySchema,
    dates: z.array(DateSchema).min(1, 'must name a date').max(MAX_BATCH_DATES).optional(),
    finish: z.literal(true, { error: 'must be true: the finish after every batch' }).optional(),
    lease: z
      .string()
      .regex(/^[a-z]+-[0-9a-f]{16}$/, 'must be the lease the plan answered (`plan.lease`)')
      .optional()
      .describe("The owner of the table's lease the plan took, shared by the batches and given up by the finish"),
  },
  { error: 'must be a JSON object' },
)

/** A history request, as the operator's input to the state machine states it. */
export type HistoryRequest = Readonly<z.infer<typeof HistorySchema>>

/** A parsed history event: a batch of `dates`, the finish, or else the plan. */
export interface HistoryInvocation {
  readonly request: HistoryRequest
  readonly dates?: readonly string[] | undefined
  readonly finish?: true | undefined
  /** The lease owner the plan answered; absent in a batch or finish sent by hand (then it takes a lease of its own). */
  readonly lease?: string | undefined
}

/** Whether the event is a history event (any object with a `history` field, so a half-formed one is refused). */
export const isHistoryEvent = (event: unknown): event is { history: unknown } =>
  typeof event === 'object' && event !== null && !Array.isArray(event) && 'history' in event

/** The history request an event holds; every problem in one ConfigError, quoting at most a short prefix. */
export const parseHistoryEvent = (event: unknown): HistoryInvocation => {
  const result = HistoryEventSchema.safeParse(event)
  if (!result.success) {
    const problems: ConfigProblem[] = result.error.issues.map((issue) => ({
      field: [...issue.path].map(String).join('.') || '(event)',
      message:
        issue.code === 'unrecognized_keys'
          ? `has unknown fields: ${issue.keys.map((k) => quotePrefix(k, 64)).join(', ')}`
          : issue.message,
    }))
    throw new ConfigError('history event', problems)
  }
  const { history, dates, finish, lease } = result.data
  const problems: ConfigProblem[] = []
  if (history.operation === HistoryOperation.ERASE && history.where === undefined) {
    problems.push({ field: 'history.where', message: 'is required for erase: the rows to remove' })
  }
  if (history.operation === HistoryOperation.REWRITE && history.where !== undefined) {
    problems.push({
      field: 'history.where',
      message: 'is not allowed for rewrite: a rewrite applies the configuration to every row of every date',
    })
  }
  if (dates !== undefined && finish !== undefined) {
    problems.push({ field: 'finish', message: 'cannot go with dates: a batch runs dates, the finish runs after them' })
  }
  if (problems.length > 0) throw new ConfigError('history event', problems)
  return {
    request: history,
    ...(dates === undefined ? {} : { dates }),
    ...(finish === undefined ? {} : { finish }),
    ...(lease === undefined ? {} : { lease }),
  }
}

/** The request of an operation's event: the table, an erasure's conditions, the key check, the plan's batch size. */
const historyRequest = (
  key: PseudonymizationKey,
  operation: HistoryOperation,
  table: string,
  batchSize: number | undefined,
  keepVersions: boolean,
  where?: HistoryRequest['where'],
): { readonly history: HistoryRequest } => ({
  history: {
    operation,
    table,
    ...(where === undefined ? {} : { where }),
    keyCheck: keyCheck(key),
    ...(batchSize === undefined ? {} : { batchSize }),
    ...(keepVersions ? { keepVersions: true as const } : {}),
  },
})

/**
 * The state machine's input for an erasure request, made on the operator's machine with the deployed key: each
 * value as its digests (digestCondition), never in clear.
 */
export const eraseEvent = (
  key: PseudonymizationKey,
  table: string,
  conditions: readonly ValueCondition[],
  batchSize?: number,
  keepVersions = false,
): { readonly history: HistoryRequest } =>
  historyRequest(
    key,
    HistoryOperation.ERASE,
    table,
    batchSize,
    keepVersions,
    conditions.map((condition) => digestCondition(key, condition)),
  )

/**
 * The state machine's input for a rewrite after a column setting changed: no condition, and the key check, since a
 * newly pseudonymized column is hashed with the deployed key, which must be the one the operator holds.
 */
export const rewriteEvent = (
  key: PseudonymizationKey,
  table: string,
  batchSize?: number,
  keepVersions = false,
): { readonly history: HistoryRequest } => historyRequest(key, HistoryOperation.REWRITE, table, batchSize, keepVersions)
