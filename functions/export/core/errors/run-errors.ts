/**
 * Failures of the run itself: writing, secrets, time, guards, the catalog's rules, state, disk and bugs; and the
 * wrapping of anything thrown into a coded error.
 */
import { FailureClass } from '../constants.ts'
import { printable } from '../printable.ts'
import type { GuardFinding } from '../run-record.ts'
import { ErrorCode } from './codes.ts'
import { ConfigError } from './config-errors.ts'
import { ExportError, tableSubject } from './export-error.ts'

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

/**
 * Another writer holds the table's lease (path/table-lease.ts): an export, an erasure or a rewrite of the same table
 * ran, and it did not end within the wait allowed. Nothing of the table was written.
 */
export class TableBusyError extends ExportError {
  constructor(details: {
    tableId?: string | undefined
    table: string
    /** What the holder does (`export`, `erase`, `rewrite`, `reprocess`) and until when its lease runs. */
    holder: { readonly operation: string; readonly expiresAt: string }
    waitedSeconds: number
    hint?: string
  }) {
    const { table, holder, waitedSeconds } = details
    super(
      ErrorCode.TABLE_BUSY,
      FailureClass.BUSY,
      `${tableSubject(details.tableId)}${table} is being written by another ${holder.operation} (its lease runs to ${holder.expiresAt}); waited ${waitedSeconds} s, nothing of ${table} was written`,
      {
        tableId: details.tableId,
        retryable: true,
        hint:
          details.hint ??
          `run it again once the ${holder.operation} has finished (a run that was killed gives the table up when its lease runs out); the previous data is kept`,
      },
    )
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

/**
 * A batch of a history operation (a Lambda event from the state machine) stopped before the function's time limit
 * with dates left; the dates it finished are done, and the same event again goes on with the rest.
 */
export class HistoryBatchIncompleteError extends ExportError {
  constructor(details: { tableId: string; done: number; left: readonly string[] }) {
    const { tableId, done, left } = details
    super(
      ErrorCode.HISTORY_BATCH_INCOMPLETE,
      FailureClass.DEADLINE,
      `${tableSubject(tableId)}${done} of ${done + left.length} dates of the batch done before the function's time limit; ${left.length} left (dt=${left[0]} to dt=${left.at(-1)})`,
      {
        tableId,
        retryable: true,
        hint: 'the state machine invokes the batch again, which goes on with the dates left; invoked by hand, send the same event again (or give the plan a smaller batchSize)',
      },
    )
  }
}

/** A date of a history operation's batch failed; it is as it was, and the dates before it are done. */
export class HistoryBatchFailedError extends ExportError {
  constructor(details: { tableId: string; exportDate: string; error: { code: string; message: string } | undefined }) {
    const { tableId, exportDate, error } = details
    super(
      ErrorCode.HISTORY_BATCH_FAILED,
      FailureClass.INTERNAL,
      `${tableSubject(tableId)}dt=${exportDate} failed${error ? ` [${error.code}]: ${error.message}` : ''}; the date is as it was, the dates before it in the batch are done`,
      {
        tableId,
        hint: "fix the date's error (its run record names it), then start the same execution input again: dates already done are skipped",
      },
    )
  }
}

/**
 * The finish of a rewrite on AWS found a date not yet in line with the configuration (a batch that did not run, a
 * date published meanwhile): the registry, the catalog and the views stay as they were, and so does the export's
 * refusal of the table.
 */
export class HistoryRewriteUnfinishedError extends ExportError {
  constructor(details: { tableId: string; tableName: string }) {
    super(
      ErrorCode.HISTORY_REWRITE_UNFINISHED,
      FailureClass.INTERNAL,
      `${tableSubject(details.tableId)}a date of ${details.tableName} is not yet in line with the configuration; the registry has not moved`,
      {
        tableId: details.tableId,
        hint: 'start the same execution input again: its plan lists every date, its batches rewrite the dates not in line and skip the others, and its finish moves the registry',
      },
    )
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
const CHANGE_STEP =
  "check the saved table in the service's UI (its filters and columns, and what the token's user may see); if the change is real, accept it"
const REPORT_STEP =
  "the service answered 200 with an error report instead of the table: check the token's user, its permissions on the saved table and the service's own logs; if the saved table really has only these columns, accept it"
const IDENTITY_STEP =
  "give each of those columns a header of its own in the saved table (the service's UI), or show them as before; to publish them named in their order instead, accept it"

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
        hint: `${held[0]?.code === 'COLUMN_IDENTITY_AMBIGUOUS' ? IDENTITY_STEP : held[0]?.code === 'ERROR_REPORT_BODY' ? REPORT_STEP : CHANGE_STEP}: rerun with --only ${details.tableName} --accept-changes (CLI) or the event {"tables":["${details.tableName}"],"acceptChanges":true} (Lambda)`,
      },
    )
    this.findings = details.findings
    this.rows = details.rows
  }
}

/**
 * The export holds rows that recorded erasure requests match, and the table is set to hold them
 * (`erasedRows: "hold"`): the service still has an erased person. Nothing is published, those rows included.
 */
export class ErasedRowsHeldError extends ExportError {
  /** What the run record keeps of it: the requests that matched and the rows held. */
  readonly erased: { readonly requests: readonly string[]; readonly rows: number }
  constructor(details: { tableId: string; tableName: string; requests: readonly string[]; rows: number }) {
    const rows = `${details.rows} ${details.rows === 1 ? 'row matches' : 'rows match'}`
    super(
      ErrorCode.ERASED_ROWS_HELD,
      FailureClass.GUARD,
      `${tableSubject(details.tableId)}held: ${rows} recorded erasure requests (${details.requests.join(', ')}) that the service still has. Nothing was published; the previous data stays as it was`,
      {
        tableId: details.tableId,
        hint: `have the person removed in the service, or publish without those rows: rerun with --only ${details.tableName} --accept-changes (CLI) or the event {"tables":["${details.tableName}"],"acceptChanges":true} (Lambda)`,
      },
    )
    this.erased = { requests: details.requests, rows: details.rows }
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
  constructor(details: {
    tableId?: string | undefined
    key: string
    where: string
    reason: string
    /** The next step, where deleting the object would not rebuild it (a raw archive). */
    hint?: string
    cause?: unknown
  }) {
    super(
      ErrorCode.STATE_CORRUPT,
      FailureClass.STATE,
      `${tableSubject(details.tableId)}${details.where}/${details.key} cannot be trusted: ${details.reason.replace(/\s*\n\s*/g, ' ')}`,
      {
        ...details,
        hint:
          details.hint ??
          `nothing was written from it and the previous data is kept; on AWS restore ${details.key} from an earlier S3 version (aws s3api list-object-versions), locally delete it to rebuild it on the next run`,
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
      ? `invalid ${error.origin}: ${error.problems.map((p) => printable(`${p.field}: ${p.message}`)).join('; ')}`
      : error.message.replace(/\s*\n\s*/g, ' ')
  return `error [${error.code}]: ${message}`
}

/**
 * An Iceberg table's current snapshot was committed by another engine (an Athena DELETE, MERGE or OPTIMIZE): its
 * manifests may hold delete files or several dates, which this exporter does not read, so nothing of the table is
 * read or written until it is back at a snapshot of its own.
 */
export class IcebergForeignCommitError extends ExportError {
  constructor(details: { table: string; operation: string }) {
    super(
      ErrorCode.ICEBERG_FOREIGN_COMMIT,
      FailureClass.STATE,
      `${details.table}: the Iceberg table's current snapshot (${details.operation}) was committed by another engine, not by this exporter`,
      {
        hint: `nothing was read or written; this exporter is the table's only writer (docs/iceberg.md). Point the table back at the metadata file of the exporter's last snapshot (the metadata log names it) in the Glue table's metadata_location, or in _iceberg/${details.table}.json without Glue, then export again`,
      },
    )
  }
}
