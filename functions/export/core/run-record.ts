/** The machine-readable record of one run, written next to the data under `_runs/`. */
import { type ColumnType, type FailureClass, RUNS_FOLDER, type RunMode, type TableFormatName } from './constants.ts'

/** Keys of a snapshot that cannot identify a row on their own. */
export interface KeyReport {
  readonly columns: readonly string[]
  /** Rows with at least one empty key cell. */
  readonly emptyKeys: number
  /** Rows whose (non-empty) key an earlier row of the snapshot already had. */
  readonly duplicateKeys: number
}

export interface ColumnRecord {
  readonly name: string
  /** Header text as the service sent it; absent for lineage columns and `__text` companions. */
  readonly header?: string
  readonly type: ColumnType
  /** For a `__text` companion (a data column): the typed column whose misfits it keeps as text. */
  readonly textOf?: string
}

export interface PublishedObject {
  readonly key: string
  readonly location: string
  readonly bytes: number
}

interface TableErrorRecord {
  readonly code: string
  readonly failureClass: FailureClass
  readonly message: string
  readonly status?: number
  /** CSV line the data error is about (ROW_FIELD_COUNT, CSV_MALFORMED), when there is one. */
  readonly line?: number
  readonly hint?: string
}

/** What an upstream change guard found when comparing an export with the table's previous published one. */
export interface GuardFinding {
  readonly code:
    | 'ROW_COUNT_DROP'
    | 'COLUMNS_REMOVED'
    | 'COLUMNS_ADDED'
    | 'COLUMN_IDENTITY_AMBIGUOUS'
    | 'ERROR_REPORT_BODY'
    | 'COLUMNS_UNMATCHED'
  /** held: nothing was published; warned: published; accepted: would have held, published under acceptChanges. */
  readonly action: 'held' | 'warned' | 'accepted'
  /** One line for logs and the summary. */
  readonly message: string
  /** The export compared with (none for a first export, which ERROR_REPORT_BODY may hold). */
  readonly previousExportDate?: string
  readonly previousRows?: number
  readonly rows?: number
  /** rows / previousRows. */
  readonly ratio?: number
  /** The setting the ratio fell below (holdBelow or warnBelow). */
  readonly threshold?: number
  /** Exported column names removed or added (or, for COLUMN_IDENTITY_AMBIGUOUS, the ones that cannot be told apart). */
  readonly columns?: readonly string[]
}

export interface TableOutcome {
  readonly tableId: string
  readonly name: string
  readonly status: 'succeeded' | 'failed'
  /** HTTP status of the download, when one was answered (never in a reprocess run). */
  readonly httpStatus?: number
  /** Requests made for the table, retries included (never in a reprocess run: it makes none). */
  readonly attempts?: number
  readonly bytesReceived: number
  /** SHA-256 (hex) of the body exactly as received. */
  readonly sha256?: string
  /** Which export was read: the CSV or the workbook (`tables[].format`). */
  readonly format?: TableFormatName
  readonly encoding?: string
  readonly delimiter?: string
  /** The worksheet read, for a workbook. */
  readonly sheet?: string
  readonly rows?: number
  readonly columns?: readonly ColumnRecord[]
  readonly objects: readonly PublishedObject[]
  readonly durationMs: number
  readonly warnings?: readonly string[]
  /** For a table with a key: rows whose key is empty or repeats (they never fail the export). */
  readonly keys?: KeyReport
  /** Every upstream change guard that fired, held or warned. */
  readonly guards?: readonly GuardFinding[]
  /** What an erasure request (`npm run erase`) left out of the date: the columns matched on, never the values. */
  readonly erasure?: ErasureRecord
  /** For a table with recorded erasure requests: the requests applied and the rows they matched (left out or held). */
  readonly erased?: ErasedRowsRecord
  /** Export dates this run removed because they were past the table's `retention`. */
  readonly expiredDates?: readonly string[]
  /**
   * Earlier versions of the date's objects (its data and raw bodies) deleted for good, in a versioned bucket: by an
   * erasure, or a rewrite that drops or pseudonymizes a column, unless `--keep-versions`.
   */
  readonly versionsDeleted?: number
  readonly error?: TableErrorRecord
}

export interface ErasureRecord {
  readonly columns: readonly string[]
  readonly rowsRemoved: number
}

export interface ErasedRowsRecord {
  /** The ids of the requests recorded for the table (`npm run erase -- --list`). */
  readonly requests: readonly string[]
  readonly rows: number
}

export interface RunRecord {
  readonly runId: string
  readonly exportDate: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly status: 'succeeded' | 'failed'
  /** `export`: from the service; `reprocess`: rebuilt from the raw archive. */
  readonly mode: RunMode
  /** Username of the token's owner, from `/rest/usermanager/me`. */
  readonly tokenOwner?: string
  readonly tables: readonly TableOutcome[]
}

export const runRecordKey = (exportDate: string, runId: string): string =>
  `${RUNS_FOLDER}/dt=${exportDate}/${runId}.json`
