/**
 * Personal-data controls of a table (`tables[].columns`): columns dropped before anything is written, and columns
 * whose values are replaced by a keyed pseudonym. The schema lives here and config.ts includes it; the checks
 * that need the rest of the table's settings (its key, archiveRaw, columnTypes) are `columnControlProblems`.
 */
import * as z from 'zod'

const exportedColumnName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,254}$/, 'must be a column name as exported (lowercase snake_case such as "email")')

const uniqueNames = (what: string) =>
  z
    .array(exportedColumnName)
    .refine((names) => new Set(names).size === names.length, 'names a column twice')
    .default([])
    .describe(what)

/** `tables[].columns`: which columns never land as they came. */
export const ColumnControlsSchema = z.strictObject({
  drop: uniqueNames(
    'Exported column names removed before anything is written: no Parquet column, no registry entry, no statistic, nothing in the run record',
  ),
  pseudonymize: uniqueNames(
    "Exported column names whose values are replaced by the first 32 lowercase hex digits of HMAC-SHA256(pseudonymization key, the cell as text, UTF-8); an empty cell stays NULL and the column is a `string`. The same value gives the same pseudonym on every date and in every table, so joins and the changes view still work; the key comes from `--pseudonymization-key-file`, `INVENTORY_PSEUDONYMIZATION_KEY` or, on AWS, the stack's pseudonymization secret",
  ),
  publishInClear: uniqueNames(
    'Exported column names taken out of `drop` or `pseudonymize` on purpose: published in clear from the next export on, while the dates already published keep them hashed (or without them); until a column is named here the export refuses the table with `COLUMN_CONTROL_REMOVED`',
  ),
})

export type ColumnControls = Readonly<z.output<typeof ColumnControlsSchema>>

/** No column dropped or pseudonymized. */
const NO_COLUMN_CONTROLS: ColumnControls = Object.freeze({ drop: [], pseudonymize: [], publishInClear: [] })

/** What the controls are checked against: the table's other settings that name columns. */
interface ControlledTable {
  readonly columns?: ColumnControls | undefined
  readonly key?: readonly string[] | undefined
  readonly archiveRaw: boolean
  readonly columnTypes: Readonly<Record<string, string>>
}

/** A problem with one table's controls, at a path under the table. */
interface ColumnControlProblem {
  readonly path: readonly (string | number)[]
  readonly message: string
}

/** Every contradiction between a table's controls and its other settings. */
export const columnControlProblems = (table: ControlledTable): ColumnControlProblem[] => {
  const { drop, pseudonymize, publishInClear } = table.columns ?? NO_COLUMN_CONTROLS
  const problems: ColumnControlProblem[] = []
  publishInClear.forEach((name, index) => {
    const also = drop.includes(name) ? 'drop' : pseudonymize.includes(name) ? 'pseudonymize' : undefined
    if (also !== undefined) {
      problems.push({
        path: ['columns', 'publishInClear', index],
        message: `"${name}" is also in columns.${also}; a column is published in clear or not`,
      })
    }
  })
  if (table.archiveRaw && drop.length + pseudonymize.length > 0) {
    // The archive keeps the body exactly as received, so it would hold every raw value the controls remove.
    problems.push({
      path: ['archiveRaw'],
      message:
        'must not be true with columns.drop or columns.pseudonymize: the raw archive keeps the export exactly as received, personal data included',
    })
  }
  drop.forEach((name, index) => {
    if (pseudonymize.includes(name)) {
      problems.push({ path: ['columns', 'drop', index], message: `"${name}" is also in columns.pseudonymize` })
    }
    if (table.key?.includes(name)) {
      problems.push({ path: ['columns', 'drop', index], message: `"${name}" is in key; a dropped column cannot be` })
    }
    if (table.columnTypes[name] !== undefined) {
      problems.push({ path: ['columnTypes', name], message: `"${name}" is in columns.drop, so it has no type` })
    }
  })
  for (const name of pseudonymize) {
    const forced = table.columnTypes[name]
    if (forced !== undefined && forced !== 'string') {
      problems.push({
        path: ['columnTypes', name],
        message: `"${name}" is in columns.pseudonymize, so its type is string, not ${forced}`,
      })
    }
  }
  return problems
}
