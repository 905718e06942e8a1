/**
 * The tables a warehouse holds, as operators name them: `--table devices` (the name the table is published under)
 * or `--table 1001` (the saved table's id), read from the schema registries under `_schemas/`, or one of the
 * configuration's tables by either. `ID=NAME` still names a table the warehouse does not know.
 */
import { closestKey, readTableSchema, type TableConfig, UsageError, type WarehouseStore } from '../export/index.ts'
import { parseTableFlag } from './args.ts'

/** A table by its two names, the warehouse's and the saved table's id, with the key its registry keeps. */
export interface NamedTable {
  readonly name: string
  readonly id: string
  readonly key?: readonly string[] | undefined
}

/** The tables with a readable schema registry, by name. */
export const publishedTables = async (store: WarehouseStore): Promise<NamedTable[]> => {
  const keys = (await store.listKeys('_schemas')).filter((key) => key.endsWith('.json'))
  const tables: NamedTable[] = []
  for (const key of keys) {
    const schema = await readTableSchema(store, key.slice(key.lastIndexOf('/') + 1, -'.json'.length))
    if (schema)
      tables.push({ name: schema.table, id: schema.sourceTableId, ...(schema.key ? { key: schema.key } : {}) })
  }
  return tables.sort((a, b) => a.name.localeCompare(b.name))
}

const notOneOf = (flag: string, what: string, names: readonly string[], hint: string) => {
  const guess = closestKey(flag, [...names])
  return new UsageError(
    `--table "${flag}" is not ${what}${guess ? `; did you mean "${guess}"?` : ''}`,
    `${hint}: ${names.length > 0 ? names.join(', ') : 'none yet'}`,
  )
}

/** The configured table `flag` names, by its name or its id. */
export const configuredTable = (flag: string, tables: readonly TableConfig[]): TableConfig => {
  const table = tables.find((t) => t.name === flag || t.id === flag)
  if (table !== undefined) return table
  throw notOneOf(
    flag,
    'a configured table id or name',
    tables.map((t) => t.name),
    'name one of the configured tables',
  )
}

/** The published table `flag` names (by its name, else its id), or the table `ID=NAME` gives. */
export const publishedTable = async (flag: string, store: WarehouseStore): Promise<NamedTable> => {
  if (flag.includes('=')) {
    const { id, name } = parseTableFlag(flag)
    return { id, name: name ?? id }
  }
  const tables = await publishedTables(store)
  const table = tables.find((t) => t.name === flag) ?? tables.find((t) => t.id === flag)
  if (table !== undefined) return table
  throw notOneOf(
    flag,
    `a table published in ${store.root} (by its name or saved table id)`,
    tables.map((t) => t.name),
    'name one of the published tables',
  )
}
