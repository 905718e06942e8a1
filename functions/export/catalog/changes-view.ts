/**
 * `<table>_changes`: for each export date of a keyed table, the rows added, removed and changed since the
 * table's previous export date. Athena (or DuckDB locally) does the work at query time; the Lambda only writes
 * the SQL, whose text is the same whatever the number of dates: the dates relation `<table>_export_dates` (one
 * row per date with the date before it, maintained by the export: schema/export-dates.ts) pairs each date's rows
 * with the previous date's. A query filtered on `dt` keeps that date's row of the relation; the date's own rows
 * are found by the literal (the filter reaches the table through `t.dt = d.dt`), the previous date's by the
 * value the relation's one row holds (dynamic filtering in Athena): two partitions and one tiny object are read.
 *
 * Matching: rows of the two dates are compared by key and `_row_fingerprint`. Equal rows pair off as a multiset
 * (n copies of a row on each side are unchanged; a third copy is added). A key that is unique on both dates and
 * whose fingerprint differs is one `changed` row: the columns show the row on `dt`, `previous_<column>` the row on
 * `previous_dt`, and `changed_columns` names the columns whose values differ; such a pair with no column that
 * differs is left out, as equal rows are. Rows with an empty key cell, or a key
 * that repeats on either date, are never `changed`: what does not pair off is `added` or `removed`.
 * The SQL is the same for Athena (Trino) and DuckDB.
 */

import { CHANGES_VIEW_SUFFIX, LineageColumn, PARTITION_KEY, PREVIOUS_DATE_COLUMN } from '../core/constants.ts'
import { fitIdentifier } from '../core/identifier.ts'

interface ChangesViewColumn {
  readonly name: string
  /** The column's warehouse type (`string`, `bigint`...), or `array<string>` for `changed_columns`. */
  readonly type: string
}

interface ChangesViewInput {
  /** The table as the SQL names it, quoted, e.g. `"inventory"."devices"` in Athena, `"devices"` in DuckDB. */
  readonly source: string
  /** The table's data columns (lineage excluded), in order. */
  readonly columns: readonly ChangesViewColumn[]
  /** `tables[].key`: names among `columns`. */
  readonly key: readonly string[]
  /** The table's dates relation as the SQL names it, quoted: `dt` and `previous_dt` (schema/export-dates.ts). */
  readonly dates: string
}

interface ChangesView {
  readonly sql: string
  /** The view's columns with their warehouse types, in order. */
  readonly columns: readonly ChangesViewColumn[]
}

export const changesViewName = (table: string): string => `${table}${CHANGES_VIEW_SUFFIX}`

/** Type of `changed_columns`, in Hive terms like the table's columns (`array(varchar)` in a Presto view). */
const CHANGED_COLUMNS_TYPE = 'array<string>'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

/**
 * Output names: a data column or `previous_<column>` that would repeat a name gets `_2`, `_3`...; one that would
 * pass 255 characters is shortened with a hash, as companions are (core/identifier.ts).
 */
const outputNames = (fixed: readonly string[], wanted: readonly string[]): string[] => {
  const taken = new Set(fixed)
  return wanted.map((name) => {
    let unique = fitIdentifier(name)
    for (let n = 2; taken.has(unique); n++) unique = fitIdentifier(name, `_${n}`)
    taken.add(unique)
    return unique
  })
}

/** The view's SQL and columns, or undefined when the table has no key. */
export const changesView = (input: ChangesViewInput): ChangesView | undefined => {
  if (input.key.length === 0) return undefined
  const keys = input.key.map(quote)
  const values = input.columns.filter((c) => !input.key.includes(c.name))
  const keyColumns = input.key.map((name) => input.columns.find((c) => c.name === name) ?? { name, type: 'string' })

  const fixed = ['change', PARTITION_KEY, 'previous_dt', ...input.key, 'changed_columns']
  const valueNames = outputNames(fixed, [...values.map((c) => c.name), ...values.map((c) => `previous_${c.name}`)])
  const currentNames = valueNames.slice(0, values.length)
  const previousNames = valueNames.slice(values.length)

  const fingerprint = quote(LineageColumn.ROW_FINGERPRINT)
  const rowNumber = quote(LineageColumn.ROW_NUMBER)
  const byKey = ['_change_dt', ...keys].join(', ')
  const [dt, previousDt] = [quote(PARTITION_KEY), quote(PREVIOUS_DATE_COLUMN)]
  // One branch per side, joined on the date it reads: `dt` for the rows after, `previous_dt` for those before.
  const side = (value: 0 | 1, date: string) =>
    `SELECT d.${dt} AS _change_dt, d.${previousDt} AS _change_previous_dt, ${value} AS _change_side, t.* FROM ${input.dates} d JOIN ${input.source} t ON t.${dt} = d.${date} WHERE d.${previousDt} IS NOT NULL`
  const branches = [side(1, dt), side(0, previousDt)]
  const pair = `_change_key_rows = 2 AND _change_key_after = 1 AND ${keys.map((k) => `${k} IS NOT NULL`).join(' AND ')}`
  // The row before a changed one is its pair's other row: in `unmatched` a pair's key has exactly those two rows,
  // so `lag` by side finds it without joining the CTE to itself (a self-join would make DuckDB materialize the
  // CTE, and a `dt` filter would no longer reach the tables under it).
  const pairWindow = `OVER (PARTITION BY ${byKey} ORDER BY _change_side)`
  const before = values.map(
    (c, i) => `CASE WHEN _change_pair THEN lag(${quote(c.name)}) ${pairWindow} END AS _change_before_${i}`,
  )
  // Not IS DISTINCT FROM: a FROM inside the select list would end it early for readers of the SQL (the validator).
  const differs = values.map((c, i) => {
    const [after, earlier] = [`p.${quote(c.name)}`, `p._change_before_${i}`]
    return `CASE WHEN p._change_pair AND NOT coalesce(${after} = ${earlier}, ${after} IS NULL AND ${earlier} IS NULL) THEN '${c.name}' END AS _change_differs_${i}`
  })
  const differing = values.map((_, i) => `a._change_differs_${i}`)
  // A pair whose fingerprints differ but whose values are all equal has not changed (a value spelt otherwise than
  // when it was fingerprinted, as by an older version): it is left out like a pair of equal rows.
  const unchanged = differing.length > 0 ? differing.map((d) => `${d} IS NULL`).join(' AND ') : 'TRUE'
  const select = [
    `CASE WHEN a._change_pair THEN 'changed' WHEN a._change_side = 1 THEN 'added' ELSE 'removed' END AS change`,
    `a._change_dt AS ${quote(PARTITION_KEY)}`,
    'a._change_previous_dt AS previous_dt',
    ...keys.map((k) => `a.${k}`),
    `filter(ARRAY[${differing.length > 0 ? differing.join(', ') : 'CAST(NULL AS varchar)'}], x -> x IS NOT NULL) AS changed_columns`,
    ...values.map((c, i) => `a.${quote(c.name)} AS ${quote(currentNames[i]!)}`),
    ...values.map((_, i) => `a._change_before_${i} AS ${quote(previousNames[i]!)}`),
  ]
  const sql = [
    'WITH sides AS (',
    `  ${branches.join('\n  UNION ALL ')}`,
    '), counted AS (',
    '  SELECT s.*,',
    `    count(*) OVER (PARTITION BY ${byKey}) AS _change_key_rows,`,
    `    sum(_change_side) OVER (PARTITION BY ${byKey}) AS _change_key_after,`,
    `    row_number() OVER (PARTITION BY ${byKey}, _change_side, ${fingerprint} ORDER BY ${rowNumber}) AS _change_copy`,
    '  FROM sides s',
    '), twins AS (',
    `  SELECT c.*, count(*) OVER (PARTITION BY ${byKey}, ${fingerprint}, _change_copy) AS _change_twins FROM counted c`,
    '), unmatched AS (',
    `  SELECT w.*, (${pair}) AS _change_pair FROM twins w WHERE _change_twins = 1`,
    '), paired AS (',
    `  SELECT u.*${before.map((b) => `,\n    ${b}`).join('')}`,
    '  FROM unmatched u',
    '), compared AS (',
    `  SELECT p.*${differs.map((d) => `,\n    ${d}`).join('')}`,
    '  FROM paired p',
    ')',
    `SELECT\n  ${select.join(',\n  ')}`,
    'FROM compared a',
    `WHERE NOT (a._change_pair AND a._change_side = 0) AND NOT (a._change_pair AND ${unchanged})`,
  ].join('\n')

  return {
    sql,
    columns: [
      { name: 'change', type: 'string' },
      { name: PARTITION_KEY, type: 'string' },
      { name: 'previous_dt', type: 'string' },
      ...keyColumns,
      { name: 'changed_columns', type: CHANGED_COLUMNS_TYPE },
      ...values.map((c, i) => ({ name: currentNames[i]!, type: c.type })),
      ...values.map((c, i) => ({ name: previousNames[i]!, type: c.type })),
    ],
  }
}
