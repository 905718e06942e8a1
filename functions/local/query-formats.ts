/** What `npm run query` prints: an aligned table for people, CSV or JSON for other programs. */
import { printable, printableJson } from '../export/index.ts'

export interface QueryResult {
  readonly columns: readonly string[]
  /** DuckDB's name of each column's type (`BIGINT`, `DECIMAL(18,2)`, `BIGINT[]`), when known. */
  readonly columnTypes?: readonly string[]
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

/** Integer types whose values DuckDB hands over as decimal strings (they may not fit a JSON number). */
const BIG_INTEGER = /^(?:U?BIGINT|U?HUGEINT|INT8|INT128|UINT64|UINT128)$/
const DECIMAL = /^DECIMAL\(\d+,\d+\)$/

/** `text` (a decimal number) as sign, significant digits and exponent, trailing zeros dropped: equal iff same value. */
const decimalValue = (text: string): string => {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text)
  if (!match) return text
  const [, sign, whole = '', fraction = '', exponent = '0'] = match
  let digits = `${whole}${fraction}`.replace(/^0+/, '')
  let power = Number(exponent) - fraction.length
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1)
    power++
  }
  return digits === '' ? '0' : `${sign}${digits}e${power}`
}

/**
 * A value of a column of type `type` as JSON: a BIGINT (or wider) as a number when it is a safe integer (within
 * ±(2^53-1)), a DECIMAL as a number when that number reads back as the same decimal value; else the exact
 * decimal string DuckDB gives. Lists are converted element by element. DOUBLE and REAL are numbers already,
 * except NaN and ±Infinity, which JSON has no number for: those stay the strings "NaN", "Infinity", "-Infinity".
 */
const jsonValue = (value: unknown, type: string | undefined): unknown => {
  if (type === undefined || value === null || value === undefined) return value ?? null
  const list = /^(.*)\[\d*\]$/.exec(type)
  if (list && Array.isArray(value)) return value.map((item) => jsonValue(item, list[1]))
  if (typeof value !== 'string') return value
  if (BIG_INTEGER.test(type)) {
    const number = Number(value)
    return Number.isSafeInteger(number) ? number : value
  }
  if (DECIMAL.test(type)) {
    const number = Number(value)
    return Number.isFinite(number) && decimalValue(String(number)) === decimalValue(value) ? number : value
  }
  return value
}

/**
 * A JSON array with one object per row (keyed by column name), one row a line. Numbers are JSON numbers where a
 * JSON reader gets the exact value back (jsonValue); the rest are strings.
 */
export const renderJson = (result: QueryResult): string => {
  const types = result.columnTypes ?? []
  const objects = result.rows.map((row) =>
    printableJson(Object.fromEntries(result.columns.map((c, i) => [c, jsonValue(row[i], types[i])]))),
  )
  return objects.length === 0 ? '[]' : `[\n${objects.join(',\n')}\n]`
}
