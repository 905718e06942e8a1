/** What `npm run query` prints: an aligned table for people, CSV or JSON for other programs. */
import { printable, printableJson } from '../export/index.ts'

export interface QueryResult {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
  /** Tables left out of the catalog (a registry of the wrong shape, a definition Glue would refuse), and why. */
  readonly skipped?: readonly string[]
}

/** A plain-text table of a result, cells clipped to keep lines readable. */
export const renderResult = (result: QueryResult, maxCell = 40): string => {
  const cell = (value: unknown): string => {
    const text =
      value === null || value === undefined ? 'NULL' : typeof value === 'object' ? JSON.stringify(value) : String(value)
    // Cells are upstream data: a line break or an escape sequence in one is shown, not obeyed.
    const flat = printable(text)
    return flat.length > maxCell ? `${flat.slice(0, maxCell - 1)}…` : flat
  }
  const rows = result.rows.map((row) => row.map(cell))
  const columns = result.columns.map(printable)
  // A loop, not Math.max(...rows): spreading 200,000 rows as arguments overflows the stack.
  const widths = columns.map((name, i) => rows.reduce((width, r) => Math.max(width, r[i]!.length), name.length))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd()
  return [
    line(columns),
    widths.map((w) => '-'.repeat(w)).join('-+-'),
    ...rows.map(line),
    `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`,
  ].join('\n')
}

/** A CSV field: quoted when it holds a delimiter, quote, line break or edge space; NULL is an empty field. */
const csvField = (value: unknown): string => {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** RFC 4180: a header line, then one line per row, CRLF-free so shell tools read it line by line. */
export const renderCsv = (result: QueryResult): string =>
  [result.columns, ...result.rows].map((row) => row.map(csvField).join(',')).join('\n')

/** A JSON array with one object per row (keyed by column name), one row a line, C1 and bidi controls escaped. */
export const renderJson = (result: QueryResult): string => {
  const objects = result.rows.map((row) =>
    printableJson(Object.fromEntries(result.columns.map((c, i) => [c, row[i] ?? null]))),
  )
  return objects.length === 0 ? '[]' : `[\n${objects.join(',\n')}\n]`
}
