/** The body arrived but cannot be landed faithfully: the CSV or workbook, or columns the configuration names. */
import { FailureClass } from '../constants.ts'
import { ErrorCode } from './codes.ts'
import { ExportError, tableSubject } from './export-error.ts'

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
      | 'RAW_ARCHIVE_CORRUPT'
      | 'DATA_OBJECT_MISSING',
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

/** A column setting that would change what a published column holds: its type, or whether it is kept or in clear. */
export interface PublishedColumnChange {
  readonly column: string
  /** What the setting asks for, as the message says it: `string (published as bigint)`, `dropped`, `pseudonymized`. */
  readonly change: string
}

/**
 * `tables[].columnTypes`, `columns.drop` or `columns.pseudonymize` changes a published column. The dates already
 * written keep the old type, the dropped column or the clear values, and Athena needs one type per column across
 * them: applied to new dates only, the setting would split the history (or leave personal data in clear in it), so
 * the table is refused until `npm run rewrite` brings every date in line (path/rewrite.ts).
 */
export class HistoryRewriteNeededError extends ExportError {
  readonly changes: readonly PublishedColumnChange[]
  constructor(details: { tableId: string; tableName: string; changes: readonly PublishedColumnChange[] }) {
    const list = details.changes.map((c) => `${c.column}: ${c.change}`).join('; ')
    super(
      ErrorCode.HISTORY_REWRITE_NEEDED,
      FailureClass.CONFIG,
      `${tableSubject(details.tableId)}the configuration of ${details.tableName} changes published columns (${list}); the dates already published do not have the change`,
      {
        tableId: details.tableId,
        hint: `nothing was published and the last good data stays. Run npm run rewrite -- --table ${details.tableName} (with the same --config and --out) to apply the change to every published date, then export again; or undo the change`,
      },
    )
    this.changes = details.changes
  }
}

/**
 * The table's `tableFormat` says one layout and its published dates are in the other: an export in the new one
 * would show analysts that date alone, so the table is refused until `npm run convert` moves the history.
 */
export class TableFormatChangedError extends ExportError {
  constructor(details: { tableId: string; tableName: string; configured: string; published: string }) {
    super(
      ErrorCode.TABLE_FORMAT_CHANGED,
      FailureClass.CONFIG,
      `${tableSubject(details.tableId)}${details.tableName} is set to the ${details.configured} layout, but its published dates are in the ${details.published} layout`,
      {
        tableId: details.tableId,
        hint: `nothing was published and the last good data stays. Run npm run convert -- --table ${details.tableName} --to ${details.configured} (with the same --config and --out) to move its history, then export again; or set "tableFormat": "${details.published}" on the table, the layout its dates are in`,
      },
    )
  }
}

/**
 * A recorded erasure request the table's run cannot apply: it needs the key the request's digests were made with
 * (no key, or another one), or it names a column the export no longer has. The rows it matches could not be told
 * apart, so nothing of the table is published rather than an erased person again.
 */
export class ErasureRequestUnusableError extends ExportError {
  constructor(details: { tableId: string; tableName: string; request: string; reason: string; hint: string }) {
    super(
      ErrorCode.ERASURE_REQUEST_UNUSABLE,
      FailureClass.CONFIG,
      `${tableSubject(details.tableId)}the erasure request ${details.request} recorded for ${details.tableName} ${details.reason}`,
      { tableId: details.tableId, hint: `nothing was published and the last good data stays; ${details.hint}` },
    )
  }
}

/**
 * A column the registry records as dropped or pseudonymized is no longer in `columns.drop` or `columns.pseudonymize`:
 * new dates would publish it in clear beside dates that keep it hashed (or without it). Refused until the operator
 * names it in `columns.publishInClear`.
 */
export class ColumnControlRemovedError extends ExportError {
  constructor(details: {
    tableId: string
    tableName: string
    removed: readonly { readonly column: string; readonly control: 'drop' | 'pseudonymize' }[]
  }) {
    const list = details.removed
      .map(({ column, control }) =>
        control === 'pseudonymize'
          ? `${column} (no longer in columns.pseudonymize: the dates already published keep it hashed)`
          : `${column} (no longer in columns.drop: the dates already published stay without it)`,
      )
      .join('; ')
    const names = details.removed.map((r) => `"${r.column}"`).join(', ')
    super(
      ErrorCode.COLUMN_CONTROL_REMOVED,
      FailureClass.CONFIG,
      `${tableSubject(details.tableId)}the configuration of ${details.tableName} would publish in clear what earlier dates do not: ${list}`,
      {
        tableId: details.tableId,
        hint: `nothing was published and the last good data stays. Put the column back in columns.drop or columns.pseudonymize, or, to publish it in clear from now on (the past stays as it is), add ${names} to tables[].columns.publishInClear`,
      },
    )
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
  XLSX_NO_HEADER: 'the worksheet read has no header row; the previous data is kept; check the saved table',
  XLSX_TOO_LARGE:
    'the workbook exceeds a limit named above (see docs/failure-behaviour.md, "Workbooks"); the previous data is kept; try "format": "csv"',
}

/** The body is not a workbook we can read faithfully (see functions/export/xlsx/). */
export class WorkbookError extends ExportError {
  constructor(
    code: WorkbookErrorCode,
    details: { tableId?: string | undefined; reason: string; hint?: string; cause?: unknown },
  ) {
    const failureClass = code === 'NOT_XLSX' ? FailureClass.PROTOCOL : FailureClass.DATA
    super(ErrorCode[code], failureClass, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      hint: details.hint ?? WORKBOOK_HINTS[code],
    })
  }
}
