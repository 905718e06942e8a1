/**
 * The guards stage, between encode and publish: compares an export with the table's latest published one (the
 * registry's `latestExport`) and says what fired. Pure: the caller holds the table (publishes nothing) when a
 * finding is `held`, and records the new baseline once the export is published.
 */
import type { GuardsConfig, TableGuardsConfig } from '../core/config.ts'
import { quotePrefix } from '../core/errors.ts'
import type { GuardFinding } from '../core/run-record.ts'
import type { AmbiguousHeader } from '../normalize/column-identity.ts'
import type { ExportBaseline, TableSchema } from '../schema/table-schema.ts'

/**
 * What an export is compared with: the registry's `latestExport`, or a re-exported date's published object,
 * whose footer may predate the columns it records (then only its row count is compared).
 */
export type GuardBaseline = Pick<ExportBaseline, 'exportDate' | 'rows'> & {
  readonly columns?: ExportBaseline['columns']
}

/** What the guards of one table do; `false` switches one off. */
type GuardSettings = GuardsConfig

/** The export about to be published. */
interface ExportSnapshot {
  readonly exportDate: string
  readonly runId: string
  readonly rows: number
  readonly columns: readonly { readonly name: string; readonly header: string }[]
}

/** A table's guards: `export.guards` with the table's overrides; undefined when the table switched them off. */
export const guardSettings = (
  defaults: GuardsConfig,
  table: TableGuardsConfig | undefined,
): GuardSettings | undefined => {
  if (table === false) return undefined
  const overrides = Object.fromEntries(Object.entries(table ?? {}).filter(([, value]) => value !== undefined))
  return { ...defaults, ...overrides }
}

const count = (n: number): string => n.toLocaleString('en-US')
const percent = (ratio: number): string => `${(ratio * 100).toFixed(ratio < 0.01 && ratio > 0 ? 2 : 1)}%`
const RENAME_NOTE = "a column renamed in the service's UI shows as one removed and one added"

/**
 * Every guard that fires for `current` against `baseline`: the export published before it for the latest date,
 * or the one it replaces for an earlier date. A first export and a backfill of a date that has no object have no
 * baseline. `accept`: an operator checked the change, so what would hold is published as `accepted`.
 */
export const checkGuards = (
  baseline: GuardBaseline | undefined,
  current: ExportSnapshot,
  settings: GuardSettings | undefined,
  accept: boolean,
): GuardFinding[] => {
  if (settings === undefined || baseline === undefined) return []
  const holdOrAccept = accept ? 'accepted' : 'held'
  const since = `dt=${baseline.exportDate}`
  const findings: GuardFinding[] = []

  const previousRows = baseline.rows
  if (previousRows > 0) {
    const { rows } = current
    const ratio = rows / previousRows
    const { holdBelow, warnBelow } = settings
    // Zero rows after a non-empty export holds whatever holdBelow says, as long as the guard is on.
    const hold = holdBelow !== false && (rows === 0 || ratio < holdBelow)
    const warn = !hold && warnBelow !== false && (rows === 0 || ratio < warnBelow)
    if (hold || warn) {
      const threshold = hold ? (holdBelow as number) : (warnBelow as number)
      const setting = hold ? 'holdBelow' : 'warnBelow'
      findings.push({
        code: 'ROW_COUNT_DROP',
        action: hold ? holdOrAccept : 'warned',
        message: `${count(rows)} rows where the previous export (${since}) had ${count(previousRows)}: ${percent(ratio)} of it, below ${setting} ${threshold}`,
        previousExportDate: baseline.exportDate,
        previousRows,
        rows,
        ratio,
        threshold,
      })
    }
  }

  const now = new Set(current.columns.map((c) => c.name))
  const before = new Set(baseline.columns?.map((c) => c.name))
  const removed = baseline.columns?.filter((c) => !now.has(c.name)) ?? []
  const added = baseline.columns === undefined ? [] : current.columns.filter((c) => !before.has(c.name))
  const rename = removed.length > 0 && added.length > 0 ? `; ${RENAME_NOTE}` : ''
  const describe = (columns: readonly { name: string; header: string }[]) =>
    columns.map((c) => (c.header === c.name ? c.name : `${c.name} ("${c.header}")`)).join(', ')
  const columnFinding = (
    code: 'COLUMNS_REMOVED' | 'COLUMNS_ADDED',
    action: GuardSettings['columnsRemoved'],
    columns: readonly { name: string; header: string }[],
    verb: string,
  ) => {
    if (columns.length === 0 || action === false) return
    findings.push({
      code,
      action: action === 'hold' ? holdOrAccept : 'warned',
      message: `${columns.length} column${columns.length === 1 ? '' : 's'} ${verb} since ${since}: ${describe(columns)}${rename}`,
      previousExportDate: baseline.exportDate,
      columns: columns.map((c) => c.name),
    })
  }
  columnFinding('COLUMNS_REMOVED', settings.columnsRemoved, removed, 'removed')
  columnFinding('COLUMNS_ADDED', settings.columnsAdded, added, 'added')
  return heldFirst(findings)
}

/** The holding findings first: the first one names the table's error code. */
export const heldFirst = (findings: readonly GuardFinding[]): GuardFinding[] => [
  ...findings.filter((f) => f.action === 'held'),
  ...findings.filter((f) => f.action !== 'held'),
]

/**
 * The identity guard: identical headers whose number changed since the latest export, or a header whose text
 * changed while another normalizes to the same name, cannot be matched to their published columns, so the export is held (or, under `accept`, published with the names they got in order). It
 * holds whatever the table's guard settings say, on a backfill too: a wrong match publishes one column's values,
 * personal ones included, under another's name.
 */
export const identityFindings = (
  ambiguous: readonly AmbiguousHeader[],
  previous: TableSchema | undefined,
  accept: boolean,
): GuardFinding[] => {
  if (previous === undefined) return []
  const previousExportDate = previous.latestExport?.exportDate ?? previous.lastExportDate
  const list = (names: readonly string[]) => (names.length === 0 ? 'none kept' : names.join(', '))
  const plural = (n: number) => `${n} column${n === 1 ? '' : 's'}`
  const action = accept ? 'accepted' : 'held'
  return ambiguous.map((found) => {
    if (found.kind === 'text') {
      const { name, header, previousHeader, twins } = found
      return {
        code: 'COLUMN_IDENTITY_AMBIGUOUS',
        action,
        message: `the column ${name} had the header ${quotePrefix(previousHeader)} in the previous export (dt=${previousExportDate}) and has ${quotePrefix(header)} in this one, while the headers of ${list(twins)} normalize to the same name: such columns are told apart by their header text, and without it only by their order`,
        previousExportDate,
        columns: [name, ...twins],
      }
    }
    if (found.kind === 'order') {
      const { header, names, added, removed } = found
      return {
        code: 'COLUMN_IDENTITY_AMBIGUOUS',
        action,
        message: `${plural(names.length)} have the header ${quotePrefix(header)} (${list(names)}) and are told apart only by their order, while columns were added or removed since the previous export (dt=${previousExportDate}): added ${added.length === 0 ? 'none' : added.join(', ')}; removed ${removed.length === 0 ? 'none' : removed.join(', ')}; one of them renamed and a new one with that header would look the same`,
        previousExportDate,
        columns: [...names],
      }
    }
    const { header, names, previous: before } = found
    return {
      code: 'COLUMN_IDENTITY_AMBIGUOUS',
      action,
      message: `${plural(before.length)} had the header ${quotePrefix(header)} in the previous export (dt=${previousExportDate}): ${list(before)}; this export has ${plural(names.length)} (${list(names)}), and columns with identical headers can be told apart only by their order`,
      previousExportDate,
      columns: [...new Set([...before, ...names])],
    }
  })
}

/**
 * Column names of the error reports services answer with (Spring's `timestamp,status,error,message,path`, a plain
 * `error,message` or `code,message`): a body whose every column is one of these, with a code and a message among
 * them, is an error report in CSV, not a saved table.
 */
const ERROR_REPORT_CODES = ['error', 'errors', 'error_code', 'error_id', 'status', 'status_code', 'code']
const ERROR_REPORT_TEXTS = [
  'message',
  'msg',
  'error_message',
  'error_description',
  'detail',
  'details',
  'description',
  'reason',
  'title',
]
const ERROR_REPORT_OTHERS = ['timestamp', 'time', 'path', 'type', 'instance', 'trace_id', 'request_id']
/** An error report has a few rows; a table of that shape with more is taken for a table. */
const MAX_ERROR_REPORT_ROWS = 20

/**
 * The shape guard: a body that is not the table at all is held whatever the guard settings say, on a first export
 * too. One whose header and rows look like an error report (ERROR_REPORT_BODY), unless the registry knows those very
 * columns; or one none of whose columns the table ever had (COLUMNS_UNMATCHED): the service answered with something
 * else than the saved table, with a status 200. `accept` publishes it all the same.
 */
export const shapeFindings = (
  current: Pick<ExportSnapshot, 'rows' | 'columns'>,
  previous: TableSchema | undefined,
  accept: boolean,
): GuardFinding[] => {
  const action = accept ? 'accepted' : 'held'
  const names = current.columns.map((c) => c.name)
  const registered = (previous?.columns ?? []).filter((c) => c.textOf === undefined).map((c) => c.name)
  const previousExportDate = previous?.latestExport?.exportDate ?? previous?.lastExportDate
  const since = previousExportDate === undefined ? {} : { previousExportDate }
  const findings: GuardFinding[] = []
  const known = [...ERROR_REPORT_CODES, ...ERROR_REPORT_TEXTS, ...ERROR_REPORT_OTHERS]
  const looksLikeReport =
    names.length > 0 &&
    names.every((name) => known.includes(name)) &&
    names.some((name) => ERROR_REPORT_CODES.includes(name)) &&
    names.some((name) => ERROR_REPORT_TEXTS.includes(name)) &&
    current.rows <= MAX_ERROR_REPORT_ROWS
  if (looksLikeReport && !names.every((name) => registered.includes(name))) {
    findings.push({
      code: 'ERROR_REPORT_BODY',
      action,
      message: `the body looks like an error report, not the saved table: its ${current.rows === 1 ? 'one row has' : `${count(current.rows)} rows have`} only the columns ${names.join(', ')}`,
      ...since,
      rows: current.rows,
      columns: names,
    })
  }
  if (registered.length > 0 && names.length > 0 && !names.some((name) => registered.includes(name))) {
    findings.push({
      code: 'COLUMNS_UNMATCHED',
      action,
      message: `none of the columns (${names.join(', ')}) is one the table had: it had ${registered.join(', ')}`,
      ...since,
      columns: names,
    })
  }
  return findings
}

/** The baseline after publishing `current`: a later date replaces it, a backfill leaves it as it was. */
export const nextBaseline = (previous: ExportBaseline | undefined, current: ExportSnapshot): ExportBaseline =>
  previous !== undefined && previous.exportDate > current.exportDate
    ? previous
    : { exportDate: current.exportDate, runId: current.runId, rows: current.rows, columns: current.columns }

/** One line for logs and the summary: `ROW_COUNT_DROP held: ...; COLUMNS_ADDED warned: ...`. */
export const describeGuards = (findings: readonly GuardFinding[]): string =>
  findings.map((f) => `${f.code} ${f.action}: ${f.message}`).join('; ')
