/** Fixed value sets and limits shared by the runtime, the local runner and the infrastructure. */

/** Column types of the warehouse, named as Athena (Hive DDL) names them. */
export const ColumnType = {
  BIGINT: 'bigint',
  DOUBLE: 'double',
  BOOLEAN: 'boolean',
  DATE: 'date',
  TIMESTAMP: 'timestamp',
  STRING: 'string',
} as const
export type ColumnType = (typeof ColumnType)[keyof typeof ColumnType]
export const COLUMN_TYPES = Object.values(ColumnType) as [ColumnType, ...ColumnType[]]

/** Why a table failed; one CloudWatch metric dimension value per class. */
export const FailureClass = {
  AUTH: 'auth',
  NOT_FOUND: 'not_found',
  SERVER: 'server',
  NETWORK: 'network',
  PROTOCOL: 'protocol',
  DATA: 'data',
  PUBLISH: 'publish',
  DEADLINE: 'deadline',
  CONFIG: 'config',
  INTERNAL: 'internal',
  /** Held by an upstream change guard: the service's answer changed too much to publish unchecked. */
  GUARD: 'guard',
  /** The exporter's own state in the warehouse (registry, run index, raw archive) cannot be trusted. */
  STATE: 'state',
  /** The local disk the exporter spools to is full. */
  STORAGE: 'storage',
  /** Another writer held the table (an erasure, a rewrite, another export of it): nothing was written. */
  BUSY: 'busy',
} as const
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass]

/** The two exports the service offers for a saved table: `/rest/tables/{id}/csv` and `/rest/tables/{id}/xlsx`. */
export const TABLE_FORMATS = ['csv', 'xlsx'] as const
export type TableFormatName = (typeof TABLE_FORMATS)[number]

/** Delimiters the dialect detector chooses from. */
export const DELIMITERS = [',', ';', '\t', '|'] as const
export type Delimiter = (typeof DELIMITERS)[number]

/** A table name is a path segment, a Glue table name and an Athena identifier at once. */
export const TABLE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,127}$/
export const TABLE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/
export const EXPORT_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/

/** Athena caps identifiers at 255 characters. */
export const MAX_COLUMN_NAME_LENGTH = 255

/** Suffix of the view that shows only a table's newest export. */
export const LATEST_VIEW_SUFFIX = '_latest'
/** Suffix of the view of rows added, removed and changed between a table's consecutive export dates. */
export const CHANGES_VIEW_SUFFIX = '_changes'
/**
 * Suffix of the small table of a keyed table's export dates, one row per date with the date before it: the
 * relation `<table>_changes` pairs consecutive dates by, so the view's text does not grow with the dates.
 */
export const EXPORT_DATES_TABLE_SUFFIX = '_export_dates'
/** Suffixes of the views (and the dates table) of a table: no table name may end in one. */
export const VIEW_SUFFIXES: readonly string[] = [LATEST_VIEW_SUFFIX, CHANGES_VIEW_SUFFIX, EXPORT_DATES_TABLE_SUFFIX]
/** The Glue database `npm run query` and `npm run ddl` stand for by default (the default stack's). */
export const LOCAL_GLUE_DATABASE = 'inventory'
/** Partition column of every table. */
export const PARTITION_KEY = 'dt'
/** File name of the one object a table has per export date. */
export const DATA_OBJECT_NAME = 'data.parquet'
/** Key of a table's one object for an export date. */
export const dataObjectKey = (table: string, exportDate: string): string =>
  `${table}/${PARTITION_KEY}=${exportDate}/${DATA_OBJECT_NAME}`
/** Top-level folders for bookkeeping; the leading underscore keeps Athena and the table globs away from them. */
export const RUNS_FOLDER = '_runs'
export const SCHEMAS_FOLDER = '_schemas'
export const RAW_FOLDER = '_raw'
/** The erasure requests recorded per table, `<folder>/<table>/<id>.json`: every later export leaves their rows out. */
export const ERASURES_FOLDER = '_erasures'
/** One small object per table, `<folder>/<table>.json`: who writes the table now (path/table-lease.ts). */
export const LEASES_FOLDER = '_leases'
/** One small object per Iceberg table, `<folder>/<table>.json`: its current metadata file, where no Glue holds it. */
export const ICEBERG_POINTERS_FOLDER = '_iceberg'
/** One tiny object per table and export date, `<folder>/<table>/dt=<date>/dates.parquet`: the dates relation. */
export const EXPORT_DATES_FOLDER = '_export_dates'
export const EXPORT_DATES_OBJECT_NAME = 'dates.parquet'
/** The dates relation's one data column: the table's export date before `dt`, NULL for its first. */
export const PREVIOUS_DATE_COLUMN = 'previous_dt'
/** The latest outcome of each table, one small object per table (`<name>.json`), rewritten by every run of it. */
export const LATEST_OUTCOMES_FOLDER = `${RUNS_FOLDER}/latest`

/** Lineage columns appended after the data columns of every table. */
export const LineageColumn = {
  RUN_ID: '_export_run_id',
  EXPORTED_AT: '_exported_at',
  SOURCE_TABLE_ID: '_source_table_id',
  ROW_NUMBER: '_source_row_number',
  /** A hash of the row's data cells (see normalize/fingerprint.ts): what `<table>_changes` compares. */
  ROW_FINGERPRINT: '_row_fingerprint',
} as const

/** CloudWatch namespace and metric names emitted (EMF) by the Lambda; the alarms and dashboard read these. */
export const METRICS_NAMESPACE = 'InventoryExport'
export const MetricName = {
  /** 1 per finished run. */
  RUNS: 'Runs',
  /** 1 when every table of the run succeeded, else 0. */
  SUCCESSFUL_RUNS: 'SuccessfulRuns',
  /** 1 when a table failed with 401/403 after retries, else 0 (one data point per run). */
  RUNS_WITH_AUTH_FAILURES: 'RunsWithAuthFailures',
  /** 1 when a table failed with 5xx/429 or the service unreachable after retries, else 0 (one per run). */
  RUNS_WITH_SERVER_FAILURES: 'RunsWithServerFailures',
  /**
   * 1 when the run failed and every failed table failed on the service's side (401/403, 5xx/429, unreachable),
   * else 0. The function-errors alarm subtracts these runs: they are the persistent-failures alarm's to judge.
   */
  RUNS_FAILED_BY_SOURCE: 'RunsFailedBySource',
  /** Per run (dimension `service`): tables that succeeded; per table (dimension `table`): 1 or 0. */
  TABLES_SUCCEEDED: 'TablesSucceeded',
  TABLES_FAILED: 'TablesFailed',
  RUN_DURATION: 'RunDuration',
  /** Per table (dimension `table`). */
  ROWS: 'Rows',
  BYTES_RECEIVED: 'BytesReceived',
  BYTES_WRITTEN: 'BytesWritten',
  TABLE_DURATION: 'TableDuration',
  /** Per failure class (dimension `failureClass`), counts tables. */
  TABLE_FAILURES: 'TableFailures',
  /** Requests retried after a transient failure (absorbed or not). */
  RETRIES: 'Retries',
  /**
   * Per table (dimension `table`): 1 when a guard held the table, else 0. Per run (dimension `service` only):
   * tables held, which the guard-held alarm reads.
   */
  GUARD_HELD: 'GuardHeld',
  /** Per table (dimension `table`): guards that warned (the table was published). */
  GUARD_WARNED: 'GuardWarned',
} as const
export type MetricName = (typeof MetricName)[keyof typeof MetricName]
/**
 * Failure classes that are not the function's fault: the persistent-failures alarm counts the first three, the
 * guard-held alarm the holds, and a table busy with another writer is the staleness alarm's to judge should it last;
 * the function-errors alarm leaves runs that failed only so to them.
 */
export const SOURCE_FAILURE_CLASSES: readonly FailureClass[] = [
  FailureClass.AUTH,
  FailureClass.SERVER,
  FailureClass.NETWORK,
  FailureClass.GUARD,
  FailureClass.BUSY,
]

export const MetricDimension = { SERVICE: 'service', TABLE: 'table', FAILURE_CLASS: 'failureClass' } as const

/** Environment variables the stack sets on the function; read only in functions/export/core/environment.ts. */
export const LambdaEnvironment = {
  /** JSON of the runtime sections of the configuration: source, tables, export, warehouse (tests, small setups). */
  EXPORT_CONFIG: 'EXPORT_CONFIG',
  /** The same JSON as a file in the bundle, relative to LAMBDA_TASK_ROOT: no 4 KB environment limit. */
  EXPORT_CONFIG_FILE: 'EXPORT_CONFIG_FILE',
  /** Set by Lambda: where the bundle is unpacked. */
  TASK_ROOT: 'LAMBDA_TASK_ROOT',
  WAREHOUSE_BUCKET: 'WAREHOUSE_BUCKET',
  TOKEN_SECRET_ARN: 'TOKEN_SECRET_ARN',
  /** The secret holding the pseudonymization key (`tables[].columns.pseudonymize`); unset when no table needs it. */
  PSEUDONYMIZATION_SECRET_ARN: 'PSEUDONYMIZATION_SECRET_ARN',
  /** Read by Powertools; also the `service` dimension of every metric. */
  SERVICE_NAME: 'POWERTOOLS_SERVICE_NAME',
  METRICS_NAMESPACE: 'POWERTOOLS_METRICS_NAMESPACE',
  /** Set by Lambda: the function's memory in MB, which decides its vCPUs (how many threads parsing gets). */
  FUNCTION_MEMORY_SIZE: 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
} as const

/** POWERTOOLS_SERVICE_NAME unless a stack overrides it. */
export const DEFAULT_SERVICE_NAME = 'inventory-export'

/** What a run did: export from the service, or rebuild a date from the raw archive (reprocess). */
/**
 * Footer key of a data object's columns whose values are pseudonyms, JSON `[name]`: what a rewrite of history reads
 * to tell a date already pseudonymized (objects written before the key was recorded lack it).
 */
export const PSEUDONYMIZED_METADATA_KEY = 'inventory.pseudonymized_columns'

export const RunMode = { EXPORT: 'export', REPROCESS: 'reprocess', ERASE: 'erase', REWRITE: 'rewrite' } as const
export type RunMode = (typeof RunMode)[keyof typeof RunMode]

/**
 * V8 flags the export runs with: in the Lambda's NODE_OPTIONS, in the npm scripts that move data, and in the
 * benchmark. The main thread allocates many short-lived strings per row; with V8's default young generation
 * (16 MiB semi-spaces, growing) the process's peak RSS grew from 265 to 397 MiB between 100,000 and 1,000,000
 * rows of a workbook while the live heap stayed near 62 MiB. 4 MiB semi-spaces keep it at 229 and 247 MiB.
 * An explicit heap limit makes V8 collect alike on every host: left to size the heap from the host's memory, V8
 * let dead buffers pile up for several seconds early in a run, and five idle runs of the 500 MB bench table
 * peaked at 238-268 MiB, against 215-225 MiB with the limit (see docs/performance.md, "Memory");
 * `test/unit/core/constants.test.ts` keeps the three places in step.
 */
export const NODE_RUNTIME_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=512'] as const
