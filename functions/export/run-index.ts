/**
 * The index of latest outcomes: one small object per table, `_runs/latest/<name>.json`, rewritten by every run
 * that exported the table. With one invocation per table, it is where to see every table's state at once; a
 * failed table keeps pointing at its last success. One object per table, so runs of different tables never
 * write the same object.
 */
import type { FailureClass } from './constants.ts'
import { LATEST_OUTCOMES_FOLDER, RunMode } from './constants.ts'
import { ErrorCode } from './errors.ts'
import type { WarehouseStore } from './publish/store.ts'
import { type RunRecord, runRecordKey, type TableOutcome } from './run-record.ts'

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

const readPrevious = async (store: WarehouseStore, key: string): Promise<LatestOutcome | undefined> => {
  const body = await store.getObject(key)
  if (body === undefined) return undefined
  try {
    return JSON.parse(body.toString('utf8')) as LatestOutcome
  } catch {
    // An unreadable entry only loses its lastSuccess; the entry written now replaces it.
    return undefined
  }
}

/**
 * A reprocess that found no archive for a table did nothing to it: its data and its last outcome stand, so its entry
 * is not rewritten (operators read `failed` there as "the table's data is in trouble").
 */
const leftUntouched = (record: RunRecord, outcome: TableOutcome): boolean =>
  record.mode === RunMode.REPROCESS && outcome.error?.code === ErrorCode.RAW_ARCHIVE_MISSING

/** Rewrites the entry of every table the run acted on. */
export const writeLatestOutcomes = async (store: WarehouseStore, record: RunRecord): Promise<void> => {
  const pending = record.tables.filter((outcome) => !leftUntouched(record, outcome))
  const worker = async (): Promise<void> => {
    for (let outcome = pending.shift(); outcome !== undefined; outcome = pending.shift()) {
      const key = latestOutcomeKey(outcome.name)
      const entry = latestOutcome(record, outcome, await readPrevious(store, key))
      await store.putObject(key, `${JSON.stringify(entry, null, 2)}\n`, 'application/json')
    }
  }
  await Promise.all(Array.from({ length: Math.min(INDEX_WRITE_CONCURRENCY, pending.length) }, worker))
}
