/**
 * The schema registry's I/O: one document per table beside the data (`_schemas/<name>.json`), read before an
 * export and registered after it with a conditional write, so two runs never lose each other's columns.
 */
import { SCHEMAS_FOLDER } from '../core/constants.ts'
import { WriteConflictError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { mergeSchemas } from './merge.ts'
import type { TableSchema } from './table-schema.ts'

const schemaKey = (table: string): string => `${SCHEMAS_FOLDER}/${table}.json`

export const readTableSchema = async (store: WarehouseStore, table: string): Promise<TableSchema | undefined> => {
  const bytes = await store.getObject(schemaKey(table))
  return bytes === undefined ? undefined : (JSON.parse(bytes.toString('utf8')) as TableSchema)
}

/** Conditional writes lost in a row before giving up: each loss means another run's change was merged in. */
const MAX_REGISTER_ATTEMPTS = 8

/**
 * Registers this export's schema without losing another run's: read the registry with its version, merge, tell
 * the catalog, and write only if nobody wrote in between; else read again. Returns the schema as registered.
 */
export const registerTableSchema = async (
  store: WarehouseStore,
  mine: TableSchema,
  publish?: (schema: TableSchema) => Promise<void>,
  /** Columns dropped as personal data: removed from the registry if it has them. */
  removed: readonly string[] = [],
): Promise<TableSchema> => {
  const key = schemaKey(mine.table)
  for (let attempt = 1; ; attempt++) {
    const current = await store.getObjectVersion(key)
    const registered = current === undefined ? undefined : (JSON.parse(current.body.toString('utf8')) as TableSchema)
    const merged = mergeSchemas(registered, mine, removed)
    if (publish) await publish(merged)
    try {
      await store.putObjectIfVersion(key, `${JSON.stringify(merged, null, 2)}\n`, 'application/json', current?.version)
      return merged
    } catch (error) {
      if (!(error instanceof WriteConflictError) || attempt >= MAX_REGISTER_ATTEMPTS) throw error
    }
  }
}
