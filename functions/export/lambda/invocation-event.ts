/**
 * The Lambda event, parsed by a schema: what a manual invocation or a schedule's input may say, or an EventBridge
 * "Scheduled Event" envelope carrying it in `detail`, never both. An event means what it says: an empty list of
 * tables is a mistake rather than "all", a field beside the envelope's `detail` is refused rather than ignored, and
 * a misspelt field gets the closest known one, as the configuration does. Every string is bounded, and messages
 * quote at most a short prefix of what was sent.
 */
import * as z from 'zod'
import { unknownKeyMessage } from '../core/config/key-suggestions.ts'
import type { ExportConfig } from '../core/config.ts'
import { formatPath, unconfiguredTables } from '../core/config.ts'
import { ConfigError, type ConfigProblem, quotePrefix } from '../core/errors.ts'
import { exportDateProblem } from '../core/export-date.ts'

/** Longer than any table id or name the configuration accepts, and than any field of an EventBridge envelope. */
const MAX_EVENT_STRING = 256
/** Tables one event may name; far more than one function exports. */
const MAX_EVENT_TABLES = 1000

const bounded = z.string().max(MAX_EVENT_STRING, { error: `must be at most ${MAX_EVENT_STRING} characters` })

/** The run an event asks for (README: "The Lambda event"); every field optional. */
const InvocationSchema = z.strictObject(
  {
    tables: z
      .array(
        z
          .string({ error: 'must be a list of table ids or names' })
          .min(1, 'must be a table id or name, not empty')
          .max(MAX_EVENT_STRING, { error: `must be at most ${MAX_EVENT_STRING} characters`, abort: true }),
        { error: 'must be a list of table ids or names' },
      )
      .min(1, 'must name at least one table; leave tables out to export every table')
      .max(MAX_EVENT_TABLES, `must name at most ${MAX_EVENT_TABLES} tables`)
      .optional()
      .describe('Narrow the run to these table ids or names'),
    exportDate: z
      .string({ error: 'must be a date as YYYY-MM-DD' })
      // Aborts: the calendar check below never sees a string longer than a date.
      .max(10, { error: 'must be a calendar date as YYYY-MM-DD', abort: true })
      .superRefine((text, ctx) => {
        const problem = exportDateProblem(text)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      })
      .optional()
      .describe('Export date (the dt= partition); UTC today when absent. Required with `reprocess`'),
    acceptChanges: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe('Publish what the upstream change guards would hold, once an operator has checked the change'),
    reprocess: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe("Rebuild `exportDate`'s Parquet from the raw archive in the bucket instead of calling the service"),
  },
  { error: 'must be a JSON object' },
)

/** What a manual invocation or the schedule's input may say. */
export type ExportInvocation = Readonly<z.infer<typeof InvocationSchema>>

/** An EventBridge "Scheduled Event": the envelope's own fields, and the run in `detail`. */
const ScheduledEnvelopeSchema = z.strictObject({
  version: bounded.optional(),
  id: bounded.optional(),
  'detail-type': bounded,
  source: bounded.optional(),
  account: bounded.optional(),
  time: bounded.optional(),
  region: bounded.optional(),
  resources: z.array(bounded).max(100).optional(),
  detail: InvocationSchema,
})

/** The run an event asks for: which tables and date, and whether it rebuilds from the raw archive. */
export interface InvocationRequest {
  readonly tables?: readonly string[]
  readonly exportDate?: string
  readonly acceptChanges?: boolean
  readonly reprocess: boolean
}

/** An unknown key longer than this is shown by its prefix. */
const MAX_KEY_SHOWN = 64

const INVOCATION_FIELDS = Object.keys(InvocationSchema.shape)
const ENVELOPE_FIELDS = Object.keys(ScheduledEnvelopeSchema.shape)

/** An object with either envelope marker is an envelope, so that a half-formed one is refused, not read as a run. */
const isEnvelope = (event: object): boolean => 'detail-type' in event || 'detail' in event

/** The run an event asks for; every problem is reported in one ConfigError. */
export const parseEvent = (event: unknown, config: ExportConfig): InvocationRequest => {
  if (event === null || event === undefined) return { reprocess: false }
  if (typeof event !== 'object' || Array.isArray(event)) {
    throw new ConfigError('invocation event', [{ field: '(event)', message: 'must be a JSON object' }])
  }
  const envelope = isEnvelope(event)
  const result = envelope ? ScheduledEnvelopeSchema.safeParse(event) : InvocationSchema.safeParse(event)
  if (!result.success) throw new ConfigError('invocation event', eventProblems(result.error.issues, envelope))
  const run: ExportInvocation = 'detail' in result.data ? result.data.detail : result.data
  const problems: ConfigProblem[] = []
  const where = envelope ? 'detail.' : ''
  for (const { index, wanted } of unconfiguredTables(config.tables, run.tables ?? [])) {
    problems.push({ field: `${where}tables[${index}]`, message: `${quotePrefix(wanted)} is not a configured table` })
  }
  if (run.reprocess === true && run.exportDate === undefined) {
    problems.push({ field: `${where}exportDate`, message: 'is required with reprocess: which export date to rebuild' })
  }
  if (problems.length > 0) throw new ConfigError('invocation event', problems)
  return {
    reprocess: run.reprocess === true,
    ...(run.tables === undefined ? {} : { tables: run.tables }),
    ...(run.exportDate === undefined ? {} : { exportDate: run.exportDate }),
    ...(run.acceptChanges === true ? { acceptChanges: true } : {}),
  }
}

/** One problem per issue; an unknown key is named (by a short prefix) with the closest key known there. */
const eventProblems = (issues: readonly z.core.$ZodIssue[], envelope: boolean): ConfigProblem[] =>
  issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return [{ field: formatPath(issue.path), message: issue.message }]
    const atRoot = issue.path.length === 0
    const known = envelope && atRoot ? ENVELOPE_FIELDS : INVOCATION_FIELDS
    return issue.keys.map((key) => ({
      field: formatPath([...issue.path, key.length > MAX_KEY_SHOWN ? quotePrefix(key, MAX_KEY_SHOWN) : key]),
      message:
        envelope && atRoot && INVOCATION_FIELDS.includes(key)
          ? 'is beside a scheduled event\'s "detail": put the fields of the run in "detail" only'
          : // A prefix is enough to suggest a field, and keeps the edit distance cheap for a huge key.
            unknownKeyMessage(key.slice(0, MAX_KEY_SHOWN), known),
    }))
  })
