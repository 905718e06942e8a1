/**
 * The index of latest outcomes: one small object per table, `_runs/latest/<name>.json`, rewritten by every run
 * that exported the table. With one invocation per table, it is where to see every table's state at once; a
 * failed table keeps pointing at its last success. One object per table, so runs of different tables never
 * write the same object.
 */
import * as z from 'zod'
import type { FailureClass } from '../core/constants.ts'
import { EXPORT_DATE_PATTERN, LATEST_OUTCOMES_FOLDER, RunMode } from '../core/constants.ts'
import { ErrorCode, StateCorruptError } from '../core/errors.ts'
import { type RunRecord, runRecordKey, type TableOutcome } from '../core/run-record.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { parseStateObject } from '../schema/state-object.ts'

/** Where a run of this table ended, and when it last succeeded. */
export interface LatestOutcome {
  readonly table: string
  readonly tableId: string
  readonly status: TableOutcome['status']
  readonly runId: string
  readonly exportDate: string
  readonly finishedAt: string
  /** Key of the full run record, relative to the warehouse root. */
  readonly runRecord: string
  readonly rows?: number
  readonly error?: {
    readonly code: string
    readonly failureClass: FailureClass
    readonly message: string
    readonly status?: number
    readonly hint?: string
  }
  /** The last run that exported the table successfully (this one when it succeeded); absent when none did. */
  readonly lastSuccess?: { readonly runId: string; readonly exportDate: string; readonly finishedAt: string }
}

/** Index writes in flight at once, for a run of many tables. */
const INDEX_WRITE_CONCURRENCY = 8

export const latestOutcomeKey = (tableName: string): string => `${LATEST_OUTCOMES_FOLDER}/${tableName}.json`

/** The index entry for one table of a finished run, given the entry it replaces. */
export const latestOutcome = (
  record: RunRecord,
  outcome: TableOutcome,
  previous: LatestOutcome | undefined,
): LatestOutcome => {
  const run = { runId: record.runId, exportDate: record.exportDate, finishedAt: record.finishedAt }
  const lastSuccess = outcome.status === 'succeeded' ? run : previous?.lastSuccess
  return {
    table: outcome.name,
    tableId: outcome.tableId,
    status: outcome.status,
    ...run,
    runRecord: runRecordKey(record.exportDate, record.runId),
    ...(outcome.rows === undefined ? {} : { rows: outcome.rows }),
    ...(outcome.error === undefined
      ? {}
      : {
          error: {
            code: outcome.error.code,
            failureClass: outcome.error.failureClass,
            message: outcome.error.message,
            ...(outcome.error.status === undefined ? {} : { status: outcome.error.status }),
            ...(outcome.error.hint === undefined ? {} : { hint: outcome.error.hint }),
          },
        }),
    ...(lastSuccess === undefined ? {} : { lastSuccess }),
  }
}

const text = z.string().min(1)
const date = z.string().regex(EXPORT_DATE_PATTERN, 'must be a date as YYYY-MM-DD')
const run = { runId: text, exportDate: date, finishedAt: text }

/** What writeLatestOutcomes writes (LatestOutcome); keys it does not know are kept. */
const LatestOutcomeDocument = z.looseObject({
  table: text,
  tableId: text,
  status: z.enum(['succeeded', 'failed']),
  ...run,
  runRecord: text,
  rows: z.int().min(0).optional(),
  error: z
    .looseObject({
      code: text,
      failureClass: text,
      message: z.string(),
      status: z.int().optional(),
      hint: z.string().optional(),
    })
    .optional(),
  lastSuccess: z.looseObject(run).optional(),
})

/** The table's entry, undefined before its first run; STATE_CORRUPT when it has the wrong shape. */
export const readLatestOutcome = async (
  store: WarehouseStore,
  tableName: string,
): Promise<LatestOutcome | undefined> => {
  const key = latestOutcomeKey(tableName)
  const body = await store.getObject(key)
  return body === undefined
    ? undefined
    : (parseStateObject(LatestOutcomeDocument, body, { root: store.root, key }) as LatestOutcome)
}

/**
 * A reprocess that found no archive for a table did nothing to it: its data and its last outcome stand, so its entry
 * is not rewritten (operators read `failed` there as "the table's data is in trouble").
 */
const leftUntouched = (record: RunRecord, outcome: TableOutcome): boolean =>
  record.mode === RunMode.REPROCESS && outcome.error?.code === ErrorCode.RAW_ARCHIVE_MISSING

/**
 * Rewrites the entry of every table the run acted on. An entry it cannot read is replaced only by a success, which
 * needs nothing from it; a failure would carry its lastSuccess forward, so that entry is left for the operator to
 * restore (the table failed with STATE_CORRUPT already, see run.ts).
 */
export const writeLatestOutcomes = async (store: WarehouseStore, record: RunRecord): Promise<void> => {
  const pending = record.tables.filter((outcome) => !leftUntouched(record, outcome))
  const worker = async (): Promise<void> => {
    for (let outcome = pending.shift(); outcome !== undefined; outcome = pending.shift()) {
      let previous: LatestOutcome | undefined
      try {
        previous = await readLatestOutcome(store, outcome.name)
      } catch (error) {
        if (!(error instanceof StateCorruptError) || outcome.status === 'failed') continue
      }
      const entry = latestOutcome(record, outcome, previous)
      await store.putObject(latestOutcomeKey(outcome.name), `${JSON.stringify(entry, null, 2)}\n`, 'application/json')
    }
  }
  await Promise.all(Array.from({ length: Math.min(INDEX_WRITE_CONCURRENCY, pending.length) }, worker))
}
