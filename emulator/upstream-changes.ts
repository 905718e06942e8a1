/**
 * Upstream changes: from a given day on, a generated table answers with most of its rows gone or a column
 * dropped or renamed, each request a clean 200, as when someone narrows a filter in the service's UI or the
 * token's user loses permission on some assets. The emulator's day is set by the test or the command line;
 * the real service knows nothing of export dates, and neither does the request.
 */
import { EmulatorError, EmulatorErrorCode } from './errors.ts'
import { type GeneratedTable, isCsvFileTable, isRawCsvTable, type Row, type SavedTable } from './tables.ts'

export interface UpstreamChange {
  /** The saved table id. */
  readonly tableId: string
  /** First day (YYYY-MM-DD) the change shows; it stays from then on. */
  readonly from: string
  /** Share of the rows still served, spread evenly over the table (0: the header only). */
  readonly keepRows?: number
  /** Header titles no longer served. */
  readonly dropColumns?: readonly string[]
  /** Header titles served under a new title: `{ "OS Version": "OS Release" }`. */
  readonly renameColumns?: Readonly<Record<string, string>>
}

export interface UpstreamChangeScript {
  /** Adds a change (checked at once); it applies to requests made on or after its `from` day. */
  add(change: UpstreamChange): void
  /** The day the emulator acts out (YYYY-MM-DD). */
  setDate(date: string): void
  clear(): void
}

const DATE = /^\d{4}-\d{2}-\d{2}$/

const problemOf = (change: UpstreamChange): string | undefined => {
  if (!DATE.test(change.from)) return `from must be a date as YYYY-MM-DD, got "${change.from}"`
  const { keepRows } = change
  if (keepRows !== undefined && !(keepRows >= 0 && keepRows <= 1))
    return `keepRows must be from 0 to 1, got ${keepRows}`
  return undefined
}

/** The emulator's UpstreamChangeScript, plus `apply()` for the server. */
export class UpstreamChanges implements UpstreamChangeScript {
  readonly #changes: UpstreamChange[] = []
  #date = new Date().toISOString().slice(0, 10)

  constructor(date?: string) {
    if (date !== undefined) this.setDate(date)
  }

  add(change: UpstreamChange): void {
    const problem = problemOf(change)
    if (problem !== undefined) {
      throw new EmulatorError(EmulatorErrorCode.OPTIONS_INVALID, `upstream change for ${change.tableId}: ${problem}`)
    }
    this.#changes.push(change)
  }

  setDate(date: string): void {
    if (!DATE.test(date))
      throw new EmulatorError(EmulatorErrorCode.OPTIONS_INVALID, `date must be YYYY-MM-DD, got "${date}"`)
    this.#date = date
  }

  clear(): void {
    this.#changes.length = 0
  }

  /** The table as served today: every change due by now applied, in the order they were added. */
  apply(table: SavedTable): SavedTable {
    const due = this.#changes.filter((c) => c.tableId === table.id && c.from <= this.#date)
    if (due.length === 0) return table
    if (isRawCsvTable(table) || isCsvFileTable(table)) {
      throw new EmulatorError(
        EmulatorErrorCode.OPTIONS_INVALID,
        `upstream changes apply to generated tables only (${table.id})`,
      )
    }
    return due.reduce(changed, table)
  }
}

const changed = (table: GeneratedTable, change: UpstreamChange): GeneratedTable => {
  const dropped = new Set(change.dropColumns ?? [])
  const kept = table.columns.flatMap((title, index) => (dropped.has(title) ? [] : [index]))
  const rename = change.renameColumns ?? {}
  const keep = change.keepRows ?? 1
  return {
    ...table,
    columns: kept.map((index) => rename[table.columns[index]!] ?? table.columns[index]!),
    rows: function* (): Generator<Row> {
      let index = 0
      for (const row of table.rows()) {
        // Keeps row i when the running share crosses a whole number: evenly spread, no total needed.
        if (Math.floor((index + 1) * keep) > Math.floor(index * keep)) yield kept.map((column) => row[column] ?? null)
        index++
      }
    },
  }
}
