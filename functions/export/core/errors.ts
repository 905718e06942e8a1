/**
 * Coded errors. Every failure the exporter reports is one of these: a machine-readable `code`, the
 * failure class used in metrics, the subject (table id, HTTP status, line) and a hint saying what to do.
 * Messages are built from configuration and response metadata only, never from the token.
 */
import { FailureClass } from './constants.ts'
import type { GuardFinding } from './run-record.ts'

export const ErrorCode = {
  CONFIG_INVALID: 'CONFIG_INVALID',
  USAGE_INVALID: 'USAGE_INVALID',
  AUTH_REJECTED: 'AUTH_REJECTED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  TABLE_NOT_FOUND: 'TABLE_NOT_FOUND',
  HTTP_CLIENT_ERROR: 'HTTP_CLIENT_ERROR',
  SERVER_ERROR: 'SERVER_ERROR',
  RATE_LIMITED: 'RATE_LIMITED',
  NETWORK_ERROR: 'NETWORK_ERROR',
  TIMEOUT: 'TIMEOUT',
  TLS_ERROR: 'TLS_ERROR',
  BODY_TRUNCATED: 'BODY_TRUNCATED',
  BODY_UNFRAMED: 'BODY_UNFRAMED',
  BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  NOT_CSV: 'NOT_CSV',
  UNEXPECTED_RESPONSE: 'UNEXPECTED_RESPONSE',
  EMPTY_BODY: 'EMPTY_BODY',
  INVALID_ENCODING: 'INVALID_ENCODING',
  CSV_MALFORMED: 'CSV_MALFORMED',
  ROW_FIELD_COUNT: 'ROW_FIELD_COUNT',
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  VALUE_OUT_OF_RANGE: 'VALUE_OUT_OF_RANGE',
  PUBLISH_FAILED: 'PUBLISH_FAILED',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  TOKEN_UNAVAILABLE: 'TOKEN_UNAVAILABLE',
  PSEUDONYMIZATION_KEY_UNAVAILABLE: 'PSEUDONYMIZATION_KEY_UNAVAILABLE',
  RAW_ARCHIVE_MISSING: 'RAW_ARCHIVE_MISSING',
  RAW_ARCHIVE_CORRUPT: 'RAW_ARCHIVE_CORRUPT',
  KEY_COLUMN_MISSING: 'KEY_COLUMN_MISSING',
  CONTROLLED_COLUMN_MISSING: 'CONTROLLED_COLUMN_MISSING',
  NOT_XLSX: 'NOT_XLSX',
  XLSX_ENCRYPTED: 'XLSX_ENCRYPTED',
  XLSX_MALFORMED: 'XLSX_MALFORMED',
  XLSX_NO_WORKSHEET: 'XLSX_NO_WORKSHEET',
  XLSX_NO_HEADER: 'XLSX_NO_HEADER',
  XLSX_TOO_LARGE: 'XLSX_TOO_LARGE',
  ROW_COUNT_DROP: 'ROW_COUNT_DROP',
  COLUMNS_REMOVED: 'COLUMNS_REMOVED',
  COLUMNS_ADDED: 'COLUMNS_ADDED',
  QUERY_FAILED: 'QUERY_FAILED',
  WAREHOUSE_EMPTY: 'WAREHOUSE_EMPTY',
  RUN_FAILED: 'RUN_FAILED',
  CATALOG_REFUSED: 'CATALOG_REFUSED',
  STATE_CORRUPT: 'STATE_CORRUPT',
  STORAGE_FULL: 'STORAGE_FULL',
  // `npm run verify` against a deployed stack (functions/local/verify-errors.ts).
  AWS_UNAVAILABLE: 'AWS_UNAVAILABLE',
  STACK_NOT_FOUND: 'STACK_NOT_FOUND',
  STACK_OUTPUT_MISSING: 'STACK_OUTPUT_MISSING',
  ATHENA_QUERY_FAILED: 'ATHENA_QUERY_FAILED',
  VERIFY_MISMATCH: 'VERIFY_MISMATCH',
  // `cdk synth` (infra/synth-errors.ts).
  SYNTH_FAILED: 'SYNTH_FAILED',
  INTERNAL: 'INTERNAL',
} as const
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

export interface ExportErrorDetails {
  readonly tableId?: string | undefined
  readonly status?: number | undefined
  readonly retryable?: boolean
  readonly hint?: string
  readonly cause?: unknown
}

/** Base class of every coded error. */
export class ExportError extends Error {
  readonly code: ErrorCode
  readonly failureClass: FailureClass
  readonly tableId: string | undefined
  readonly status: number | undefined
  /** Whether trying the same request again may succeed. */
  readonly retryable: boolean
  /** What the operator should do next. */
  readonly hint: string | undefined

  constructor(code: ErrorCode, failureClass: FailureClass, message: string, details: ExportErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = new.target.name
    this.code = code
    this.failureClass = failureClass
    this.tableId = details.tableId
    this.status = details.status
    this.retryable = details.retryable ?? false
    this.hint = details.hint
  }

  /** A plain object for logs and run records. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      failureClass: this.failureClass,
      message: this.message,
      ...(this.tableId === undefined ? {} : { tableId: this.tableId }),
      ...(this.status === undefined ? {} : { status: this.status }),
      retryable: this.retryable,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
    }
  }
}

export interface ConfigProblem {
  readonly field: string
  readonly message: string
}

/** The configuration is invalid; `problems` names every offending field. */
export class ConfigError extends ExportError {
  readonly problems: readonly ConfigProblem[]
  /** What was invalid: a file, the flags, the Lambda environment. */
  readonly origin: string
  constructor(origin: string, problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.field}: ${p.message}`).join('\n')
    super(ErrorCode.CONFIG_INVALID, FailureClass.CONFIG, `invalid ${origin}:\n${lines}`, {
      hint: 'fix the fields named above and start again',
    })
    this.problems = problems
    this.origin = origin
  }
}

/**
 * Bad command-line usage (exit 2). Only a problem with the flags themselves points at --help; a flag whose value
 * names something unusable (a missing file, a file where a folder belongs) gets a next step about that thing.
 */
export class UsageError extends ExportError {
  constructor(message: string, hint = 'run with --help for the list of flags') {
    super(ErrorCode.USAGE_INVALID, FailureClass.CONFIG, message, { hint })
  }
}

/** SQL the local warehouse could not run (`npm run query`): the statement is at fault, not the flags. */
export class QueryError extends ExportError {
  constructor(reason: string) {
    // The DATA class makes the runner exit 1: the command was used right, the SQL did not run.
    super(ErrorCode.QUERY_FAILED, FailureClass.DATA, `the query failed: ${reason}`, {
      hint: 'fix the SQL; tables and <name>_latest views go by their Athena names (SHOW TABLES lists them)',
    })
  }
}

/** Characters of an untrusted value that a message quotes. */
export const QUOTED_PREFIX_LENGTH = 40

/**
 * An untrusted value for a message: JSON-quoted (so a line break in it cannot split the message), and only its
 * first characters when it is long, with its length, so a 10 MB value never becomes a 10 MB message.
 */
export const quotePrefix = (value: string, max: number = QUOTED_PREFIX_LENGTH): string =>
  value.length <= max
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, max))}... (${value.length.toLocaleString('en-US')} characters)`
/** `npm run query` or `npm run ddl` on a warehouse folder no export has written to yet. */
export class WarehouseEmptyError extends ExportError {
  constructor(root: string) {
    super(ErrorCode.WAREHOUSE_EMPTY, FailureClass.NOT_FOUND, `no table has been exported to ${root} yet`, {
      hint: 'export first: npm start (the demo), or npm start -- --config FILE; or point --out at the warehouse folder',
    })
  }
}

const tableSubject = (tableId: string | undefined): string => (tableId === undefined ? '' : `table ${tableId}: `)

/** 401: the token is missing, unknown, expired or revoked. */
export class AuthenticationError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.AUTH_REJECTED,
      FailureClass.AUTH,
      `${tableSubject(details.tableId)}${details.what} was rejected with HTTP ${details.status}: the token is missing, invalid, expired or revoked`,
      {
        ...details,
        hint: 'create a new API token (Settings > API Tokens), store it in the secret, then run `npm run check`',
      },
    )
  }
}

/** 403: the token works but its owner may not read this. */
export class PermissionError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.PERMISSION_DENIED,
      FailureClass.AUTH,
      `${tableSubject(details.tableId)}${details.what} was refused with HTTP ${details.status}: the token's user lacks permission`,
      { ...details, hint: "share the saved table with the token's user, or grant the user the export permission" },
    )
  }
}

/** 404: unknown table id, or the export feature is disabled. */
export class TableNotFoundError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.TABLE_NOT_FOUND,
      FailureClass.NOT_FOUND,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}: the table id does not exist or the export feature is disabled`,
      {
        ...details,
        hint: 'check the table id (last segment of the saved table permalink) and that API export is enabled',
      },
    )
  }
}

/** Any other 4xx. */
export class HttpClientError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.HTTP_CLIENT_ERROR,
      FailureClass.PROTOCOL,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}`,
      { ...details, hint: 'the request was refused; check the base URL and the service version' },
    )
  }
}

/** 5xx or 429 that persisted after retries (or would be retried). */
export class ServerError extends ExportError {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined
  constructor(details: {
    tableId?: string | undefined
    status: number
    what: string
    attempts?: number
    retryAfterMs?: number | undefined
  }) {
    const rateLimited = details.status === 429
    const tries =
      details.attempts === undefined ? '' : ` (after ${details.attempts} attempt${details.attempts === 1 ? '' : 's'})`
    const wait = details.retryAfterMs
      ? `; it asked to be retried after ${Math.ceil(details.retryAfterMs / 1000)} s (Retry-After)`
      : ''
    super(
      rateLimited ? ErrorCode.RATE_LIMITED : ErrorCode.SERVER_ERROR,
      FailureClass.SERVER,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}${tries}: ${rateLimited ? 'rate limited' : 'server or load problem'}${wait}`,
      {
        ...details,
        retryable: true,
        hint: 'the service is failing or overloaded; the next scheduled run retries, or reduce export.concurrency (a Retry-After longer than export.retry.maxRetryAfterSeconds is not waited for)',
      },
    )
    this.retryAfterMs = details.retryAfterMs
  }
}

/** Connection refused, reset, DNS failure or a timeout. */
export class NetworkError extends ExportError {
  constructor(details: {
    tableId?: string | undefined
    what: string
    reason: string
    timeout?: boolean
    cause?: unknown
  }) {
    super(
      details.timeout ? ErrorCode.TIMEOUT : ErrorCode.NETWORK_ERROR,
      FailureClass.NETWORK,
      `${tableSubject(details.tableId)}${details.what} failed: ${details.reason}`,
      {
        ...details,
        retryable: true,
        hint: 'check that the service is reachable from where the exporter runs (VPC, security group, DNS)',
      },
    )
  }
}

/** The TLS handshake failed: an untrusted or mismatched certificate. */
export class TlsError extends ExportError {
  constructor(details: {
    tableId?: string | undefined
    what: string
    reason: string
    /** The port answered plain HTTP to the TLS handshake. */
    plainHttp?: boolean
    cause?: unknown
  }) {
    super(
      ErrorCode.TLS_ERROR,
      FailureClass.NETWORK,
      `${tableSubject(details.tableId)}${details.what} failed TLS${details.plainHttp ? ' (the port answered plain HTTP)' : ''}: ${details.reason}`,
      {
        ...details,
        hint: details.plainHttp
          ? 'the port speaks plain HTTP, not https: use the https port of the service in source.baseUrl, or http:// (with source.allowInsecureHttp for a non-loopback host)'
          : 'for a private CA, set source.caCertificatesFile to a PEM bundle of the chain',
      },
    )
  }
}

const PROTOCOL_HINTS = {
  BODY_TRUNCATED: 'the download ended early; the previous data is kept and the next run retries',
  NOT_CSV:
    'the service answered with a page instead of the file; check the base URL and any proxy or login in front of it',
  UNEXPECTED_RESPONSE:
    'the service answered something other than what was asked for (a redirect, a partial or empty answer, a record that is not JSON); check the base URL and any proxy or login in front of it',
  BODY_UNFRAMED:
    'a cut-off body could not be told from a complete one, so none of it was used and the previous data is kept; make the service or the proxy in front of it send Content-Length or chunked encoding',
  BODY_TOO_LARGE:
    'the answer is far larger than such an answer can be; check the base URL and any proxy in front of it',
} as const

/** The response is not the file we asked for: cut short, unframed, oversized, or HTML/JSON where CSV was expected. */
export class ProtocolError extends ExportError {
  constructor(
    code: keyof typeof PROTOCOL_HINTS,
    details: { tableId?: string | undefined; status?: number; reason: string },
  ) {
    super(ErrorCode[code], FailureClass.PROTOCOL, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      retryable: code === 'BODY_TRUNCATED',
      hint: PROTOCOL_HINTS[code],
    })
  }
}

/** The body is a CSV we cannot read faithfully. */
export class DataError extends ExportError {
  readonly line: number | undefined
  constructor(
    code:
      | 'EMPTY_BODY'
      | 'INVALID_ENCODING'
      | 'CSV_MALFORMED'
      | 'ROW_FIELD_COUNT'
      | 'LIMIT_EXCEEDED'
      | 'VALUE_OUT_OF_RANGE'
      | 'RAW_ARCHIVE_MISSING'
      | 'RAW_ARCHIVE_CORRUPT',
    details: { tableId?: string | undefined; reason: string; line?: number; hint?: string; cause?: unknown },
  ) {
    super(ErrorCode[code], FailureClass.DATA, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      hint: details.hint ?? 'the previous data is kept; fix the saved table or its options in the configuration',
    })
    this.line = details.line
  }
}

/** `tables[].key` names a column the table does not have; nothing is published until the key is fixed. */
export class KeyColumnError extends ExportError {
  readonly missing: readonly string[]
  constructor(tableId: string, missing: readonly string[], columns: readonly string[]) {
    const names = missing.map((name) => `"${name}"`).join(', ')
    super(
      ErrorCode.KEY_COLUMN_MISSING,
      FailureClass.CONFIG,
      `${tableSubject(tableId)}tables[].key names ${names}, which ${missing.length === 1 ? 'is not a column' : 'are not columns'} of this table (columns: ${columns.join(', ')})`,
      {
        tableId,
        hint: 'set tables[].key to exported column names (npm run check suggests one); the previous data is kept',
      },
    )
    this.missing = missing
  }
}

/**
 * `tables[].columns.drop` or `.pseudonymize` names a column this export does not have. Failing keeps a renamed
 * personal column from landing raw under its new name while the old one is quietly matched by nothing.
 */
export class ControlledColumnError extends ExportError {
  readonly missing: readonly string[]
  constructor(tableId: string, missing: readonly { list: string; name: string }[], columns: readonly string[]) {
    const names = missing.map(({ list, name }) => `"${name}" (columns.${list})`).join(', ')
    super(
      ErrorCode.CONTROLLED_COLUMN_MISSING,
      FailureClass.CONFIG,
      `${tableSubject(tableId)}tables[].columns names ${names}, which ${missing.length === 1 ? 'is not a column' : 'are not columns'} of this export (columns: ${columns.join(', ')})`,
      {
        tableId,
        hint: 'set columns.drop and columns.pseudonymize to exported column names as npm run check shows them; nothing was published',
      },
    )
    this.missing = missing.map(({ name }) => name)
  }
}

export type WorkbookErrorCode =
  | 'NOT_XLSX'
  | 'XLSX_ENCRYPTED'
  | 'XLSX_MALFORMED'
  | 'XLSX_NO_WORKSHEET'
  | 'XLSX_NO_HEADER'
  | 'XLSX_TOO_LARGE'

const WORKBOOK_HINTS: Readonly<Record<WorkbookErrorCode, string>> = {
  NOT_XLSX:
    'the service answered with something other than a workbook; check the base URL and any proxy or login in front of it',
  XLSX_ENCRYPTED: 'the workbook is password-protected; export it without a password, or set "format": "csv"',
  XLSX_MALFORMED: 'the workbook cannot be read; the previous data is kept; try "format": "csv" for this table',
  XLSX_NO_WORKSHEET: 'the workbook has no worksheet; the previous data is kept; check the saved table',
  XLSX_NO_HEADER: 'the first worksheet has no header row; the previous data is kept; check the saved table',
  XLSX_TOO_LARGE:
    'the workbook exceeds a limit named above (see docs/failure-behaviour.md, "Workbooks"); the previous data is kept; try "format": "csv"',
}

/** The body is not a workbook we can read faithfully (see functions/export/xlsx/). */
export class WorkbookError extends ExportError {
  constructor(code: WorkbookErrorCode, details: { tableId?: string | undefined; reason: string; cause?: unknown }) {
    const failureClass = code === 'NOT_XLSX' ? FailureClass.PROTOCOL : FailureClass.DATA
    super(ErrorCode[code], failureClass, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      hint: WORKBOOK_HINTS[code],
    })
  }
}

/** Writing the output failed; nothing was published. */
export class PublishError extends ExportError {
  constructor(details: { tableId?: string | undefined; target: string; reason: string; cause?: unknown }) {
    super(
      ErrorCode.PUBLISH_FAILED,
      FailureClass.PUBLISH,
      `${tableSubject(details.tableId)}writing ${details.target} failed: ${details.reason}`,
      { ...details, retryable: true, hint: 'check write access to the warehouse; the previous data is kept' },
    )
  }
}

/** A conditional write lost: another writer changed the object since it was read. Read it again and retry. */
export class WriteConflictError extends PublishError {
  constructor(details: { target: string; cause?: unknown }) {
    super({ ...details, reason: 'another run changed it at the same time' })
  }
}

/** The pseudonymization key's secret could not be read; no table ran, so nothing raw was written either. */
export class PseudonymizationKeyUnavailableError extends ExportError {
  constructor(source: string, cause?: unknown) {
    super(
      ErrorCode.PSEUDONYMIZATION_KEY_UNAVAILABLE,
      FailureClass.CONFIG,
      `the pseudonymization key could not be read from ${source}`,
      {
        cause,
        hint: 'check that the secret exists, has a value of at least 32 characters and that the function may read it (docs/personal-data.md)',
      },
    )
  }
}

/** The run ran out of time before this table finished. */
export class DeadlineError extends ExportError {
  constructor(details: { tableId?: string | undefined; reason: string; hint?: string }) {
    super(ErrorCode.DEADLINE_EXCEEDED, FailureClass.DEADLINE, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      retryable: true,
      hint: details.hint ?? 'raise deployment.lambda.timeoutSeconds or split the tables over several schedules',
    })
  }
}

/** The token could not be read from its source. */
export class TokenUnavailableError extends ExportError {
  constructor(source: string, cause?: unknown) {
    super(ErrorCode.TOKEN_UNAVAILABLE, FailureClass.CONFIG, `the API token could not be read from ${source}`, {
      cause,
      // The Lambda's advice; the local runner gives its own (--token-file, INVENTORY_TOKEN) for this code.
      hint: "put the token in the secret: aws secretsmanager put-secret-value --secret-id <the stack output TokenSecretArn> --secret-string '<token>'",
    })
  }
}

/** An upstream change guard held the table: nothing was published, the previous data and latest view stay. */
export class GuardHoldError extends ExportError {
  /** Every guard that fired for the table, the holding ones first. */
  readonly findings: readonly GuardFinding[]
  /** Rows of the export that was held. */
  readonly rows: number
  constructor(details: {
    tableId: string
    tableName: string
    rows: number
    findings: readonly GuardFinding[]
  }) {
    const held = details.findings.filter((f) => f.action === 'held')
    super(
      ErrorCode[held[0]?.code ?? 'ROW_COUNT_DROP'],
      FailureClass.GUARD,
      `${tableSubject(details.tableId)}held: ${held.map((f) => f.message).join('; ')}. Nothing was published; the previous data and the latest view stay as they were`,
      {
        tableId: details.tableId,
        hint: `check the saved table in the service's UI (its filters and columns, and what the token's user may see); if the change is real, accept it: rerun with --only ${details.tableName} --accept-changes (CLI) or the event {"tables":["${details.tableName}"],"acceptChanges":true} (Lambda)`,
      },
    )
    this.findings = details.findings
    this.rows = details.rows
  }
}

/** The catalog (Glue) would refuse the table's definition by its documented rules; checked before anything moves. */
export class CatalogRefusedError extends ExportError {
  constructor(details: { tableId?: string | undefined; name: string; problems: readonly string[] }) {
    super(
      ErrorCode.CATALOG_REFUSED,
      FailureClass.DATA,
      `${tableSubject(details.tableId)}the catalog would refuse the definition of ${details.name}: ${details.problems.join('; ')}`,
      {
        tableId: details.tableId,
        hint: "nothing moved: the previous date's data, registry, run index and catalog stay as they were; the table's columns pass a catalog limit named above (fewer columns, e.g. a saved table that shows fewer, or a shorter tables[].key, bring it back within)",
      },
    )
  }
}

/**
 * A state object of the exporter's own (the schema registry, the run index, a raw archive) does not have the shape
 * or content it must: the table fails, and nothing is written from what could not be read. One line, whatever the
 * object held.
 */
export class StateCorruptError extends ExportError {
  /** The object's key, relative to the warehouse root. */
  readonly key: string
  constructor(details: { tableId?: string | undefined; key: string; where: string; reason: string; cause?: unknown }) {
    super(
      ErrorCode.STATE_CORRUPT,
      FailureClass.STATE,
      `${tableSubject(details.tableId)}${details.where}/${details.key} cannot be trusted: ${details.reason.replace(/\s*\n\s*/g, ' ')}`,
      {
        ...details,
        hint: `nothing was written from it and the previous data is kept; on AWS restore ${details.key} from an earlier S3 version (aws s3api list-object-versions), locally delete it to rebuild it on the next run`,
      },
    )
    this.key = details.key
  }
}

/** A local disk is full: the spool's (the Lambda's /tmp, the OS temp folder), or a local warehouse folder's. */
export class StorageFullError extends ExportError {
  constructor(details: { tableId?: string | undefined; path?: string | undefined; cause?: unknown }) {
    super(
      ErrorCode.STORAGE_FULL,
      FailureClass.STORAGE,
      `${tableSubject(details.tableId)}the disk is full${details.path === undefined ? '' : ` (writing ${details.path})`}`,
      {
        ...details,
        retryable: true,
        hint: "the previous data is kept; free space on the disk, or on AWS raise deployment.lambda.ephemeralStorageMb (the function's /tmp) or lower export.concurrency; the next run retries",
      },
    )
  }
}

/** Something that should not happen did: a bug, or an environment problem such as a full disk. */
export class InternalError extends ExportError {
  constructor(details: { tableId?: string | undefined; reason: string; cause?: unknown }) {
    super(
      ErrorCode.INTERNAL,
      FailureClass.INTERNAL,
      `${tableSubject(details.tableId)}unexpected failure: ${details.reason}`,
      {
        ...details,
        hint: 'the previous data is kept; if it repeats, report it with the run record',
      },
    )
  }
}

/** Wraps anything thrown into a coded error, keeping coded ones as they are. */
export const toExportError = (error: unknown, tableId?: string): ExportError => {
  if (error instanceof ExportError) return error
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC') {
    return new StorageFullError({ tableId, path: (error as NodeJS.ErrnoException).path, cause: error })
  }
  const reason = error instanceof Error ? error.message : String(error)
  return new InternalError({ tableId, reason, cause: error })
}

/** The failure as one line for a terminal: `error [CODE]: message`, a ConfigError's problems joined by "; ". */
export const oneLineMessage = (error: ExportError): string => {
  const message =
    error instanceof ConfigError
      ? `invalid ${error.origin}: ${error.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`
      : error.message.replace(/\s*\n\s*/g, ' ')
  return `error [${error.code}]: ${message}`
}
