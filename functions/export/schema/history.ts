/**
 * What a table's column settings (`columnTypes`, `columns.drop`, `columns.pseudonymize`) change in its published
 * history, compared with the registry: the export refuses a table they change (HISTORY_REWRITE_NEEDED), and
 * `npm run rewrite` (path/rewrite.ts) writes every date against the schema they ask for. Pure.
 */
import type { TableConfig } from '../core/config.ts'
import { ColumnType } from '../core/constants.ts'
import type { PublishedColumnChange } from '../core/errors.ts'
import { withoutColumns } from './merge.ts'
import { companionName, maxDate, minDate, type RegisteredColumn, type TableSchema } from './table-schema.ts'

type ColumnSettings = Pick<TableConfig, 'columnTypes' | 'columns'>

/** The columns the dates were published with as pseudonyms (a registry that did not record them: the settings'). */
export const publishedPseudonyms = (table: ColumnSettings, schema: TableSchema): readonly string[] =>
  schema.pseudonymized ?? table.columns.pseudonymize

/** The type the settings ask of a data column: string for a pseudonym, else `columnTypes`, else none. */
const askedType = (table: ColumnSettings, column: string): ColumnType | undefined =>
  table.columns.pseudonymize.includes(column) ? ColumnType.STRING : table.columnTypes[column]

/** Each published data column the settings change, with what they change (empty when the history is in line). */
export const publishedColumnChanges = (table: ColumnSettings, schema: TableSchema): PublishedColumnChange[] => {
  const pseudonyms = publishedPseudonyms(table, schema)
  return schema.columns.flatMap(({ name, type, textOf }) => {
    if (textOf !== undefined) return []
    if (table.columns.drop.includes(name)) return [{ column: name, change: 'dropped' }]
    const changes: string[] = []
    if (table.columns.pseudonymize.includes(name) && !pseudonyms.includes(name)) changes.push('pseudonymized')
    const asked = askedType(table, name)
    if (asked !== undefined && asked !== type) changes.push(`${asked} (published as ${type})`)
    return changes.length === 0 ? [] : [{ column: name, change: changes.join(', ') }]
  })
}

/**
 * The registry as the settings want it: dropped columns (and their companions) gone, each column of the asked
 * type, and a string column's companion gone (every value fits a string). Companions a narrower type needs are
 * added by `withCompanions` once the dates say which.
 */
export const rewrittenSchema = (table: ColumnSettings, schema: TableSchema): TableSchema => {
  const kept = withoutColumns(schema, table.columns.drop)
  const typeOf = new Map(kept.columns.map((c) => [c.name, askedType(table, c.name) ?? c.type]))
  const columns = kept.columns.flatMap((column): RegisteredColumn[] => {
    if (column.textOf === undefined) return [{ ...column, type: typeOf.get(column.name)! }]
    return typeOf.get(column.textOf) === ColumnType.STRING ? [] : [column]
  })
  return { ...kept, columns, ...recordedControls(table, schema, table.columns.pseudonymize) }
}

/**
 * What the registry records of the controls once a date is written: the columns published as pseudonyms (`now`:
 * those hashed now and those read back as pseudonyms) and the dropped ones, each kept from the registry until the
 * operator takes it out on purpose (`columns.publishInClear`), so that a column taken out of `drop` or `pseudonymize`
 * by mistake is refused however many dates pass (removedControls).
 */
export const recordedControls = (
  table: ColumnSettings,
  registered: TableSchema | undefined,
  now: readonly string[],
): { readonly pseudonymized: readonly string[]; readonly dropped: readonly string[] } => {
  const { drop, publishInClear } = table.columns
  const kept = (names: readonly string[] | undefined, except: readonly string[]) =>
    (names ?? []).filter((name) => !except.includes(name))
  const dropped = [...new Set([...drop, ...kept(registered?.dropped, publishInClear)])]
  return {
    pseudonymized: [...new Set([...now, ...kept(registered?.pseudonymized, [...publishInClear, ...drop])])],
    dropped,
  }
}

/** A column the registry records as dropped or pseudonymized that this date would publish in clear. */
export interface RemovedControl {
  readonly column: string
  readonly control: 'drop' | 'pseudonymize'
}

/**
 * The columns this date writes (`written`) in clear that the registry records as dropped or pseudonymized, and the
 * operator has not named in `columns.publishInClear`: new dates would publish in clear what the old ones keep hashed.
 */
export const removedControls = (
  table: ColumnSettings,
  registered: TableSchema | undefined,
  written: readonly string[],
  readBackPseudonyms: readonly string[] = [],
): RemovedControl[] => {
  const { pseudonymize, publishInClear } = table.columns
  const clear = (name: string) => written.includes(name) && !publishInClear.includes(name)
  return [
    ...(registered?.dropped ?? []).filter(clear).map((column) => ({ column, control: 'drop' as const })),
    ...(registered?.pseudonymized ?? [])
      .filter((name) => clear(name) && !pseudonymize.includes(name) && !readBackPseudonyms.includes(name))
      .map((column) => ({ column, control: 'pseudonymize' as const })),
  ]
}

/** `schema` with the companions the rewritten dates have (`found`: each companion's name and the dates with it). */
export const withCompanions = (schema: TableSchema, found: ReadonlyMap<string, readonly string[]>): TableSchema => {
  const columns = [...schema.columns]
  for (const column of schema.columns) {
    const name = companionName(column.name)
    const dates = found.get(name)
    if (column.textOf !== undefined || dates === undefined || dates.length === 0) continue
    const at = columns.findIndex((c) => c.name === name)
    const firstSeen = dates.reduce<string | undefined>((min, d) => minDate(min, d), undefined)!
    const lastSeen = dates.reduce<string | undefined>((max, d) => maxDate(max, d), undefined)!
    const companion = { name, type: ColumnType.STRING, textOf: column.name, firstSeen, lastSeen }
    if (at < 0) columns.push(companion)
  }
  return { ...schema, columns }
}
