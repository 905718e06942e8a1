/**
 * What `npm run check` suggests as `tables[].key` for a table without one: the columns that identify a row in the
 * rows it read. A key should be an identifier, not a value that happens to differ in a sample: a timestamp, a date,
 * a flag or a measurement is never offered, and columns named like identifiers come before the others.
 */
import { ColumnType } from '../core/constants.ts'

export interface KeyCandidate {
  readonly name: string
  readonly type: ColumnType
}

/** Types no key is made of: they change from export to export, or hold too few values to tell rows apart. */
const NEVER_KEY_TYPES: ReadonlySet<ColumnType> = new Set([
  ColumnType.TIMESTAMP,
  ColumnType.DATE,
  ColumnType.BOOLEAN,
  ColumnType.DOUBLE,
])

/** Names of identifiers: `id`, `device_id`, `userid`, `uuid`, `serial_number`, `software_name`, `hostname`. */
const IDENTIFIER_NAME = /(?:id|uuid|guid|serial|serial_number|name|code)$/

/** Pairs are tried among this many candidates at most: 66 pairs over the sample, cheap next to reading it. */
const MAX_PAIR_CANDIDATES = 12

/** Whether the cells of `columns` are never empty in `sample` and, taken together, never repeat. */
const identifies = (columns: readonly number[], sample: readonly (readonly string[])[]): boolean => {
  const seen = new Set<string>()
  for (const record of sample) {
    const cells = columns.map((index) => record[index] ?? '')
    if (cells.some((cell) => cell === '')) return false
    const joined = JSON.stringify(cells)
    if (seen.has(joined)) return false
    seen.add(joined)
  }
  return true
}

/**
 * The key to suggest: one identifier-like column that identifies every row of `sample`, else a pair of them, else
 * one other column (a string or a bigint); undefined when there is none, or fewer than two rows to judge from.
 */
export const suggestKey = (
  columns: readonly KeyCandidate[],
  sample: readonly (readonly string[])[],
): readonly string[] | undefined => {
  if (sample.length < 2) return undefined
  const usable = columns.flatMap((column, index) => (NEVER_KEY_TYPES.has(column.type) ? [] : [{ ...column, index }]))
  const named = usable.filter((column) => IDENTIFIER_NAME.test(column.name))
  const others = usable.filter((column) => !IDENTIFIER_NAME.test(column.name))
  const single = (list: typeof usable) => list.find((column) => identifies([column.index], sample))
  const one = single(named)
  if (one) return [one.name]
  const pairable = named.slice(0, MAX_PAIR_CANDIDATES)
  for (const [i, first] of pairable.entries())
    for (const second of pairable.slice(i + 1))
      if (identifies([first.index, second.index], sample)) return [first.name, second.name]
  const other = single(others)
  return other ? [other.name] : undefined
}
