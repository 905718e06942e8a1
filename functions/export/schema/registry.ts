/**
 * The schema registry's I/O: one document per table beside the data (`_schemas/<name>.json`), read before an
 * export and registered after it with a conditional write, so two runs never lose each other's columns.
 */
import * as z from 'zod'
import { ColumnType, EXPORT_DATE_PATTERN, SCHEMAS_FOLDER } from '../core/constants.ts'
import { StateCorruptError, WriteConflictError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { mergeSchemas, withoutEmptyDrops } from './merge.ts'
import { parseStateObject } from './state-object.ts'
import { SCHEMA_DOCUMENT_VERSION, type TableSchema } from './table-schema.ts'

const schemaKey = (table: string): string => `${SCHEMAS_FOLDER}/${table}.json`

const date = z.string().regex(EXPORT_DATE_PATTERN, 'must be a date as YYYY-MM-DD')
const name = z.string().min(1)

/** What registry.ts writes (TableSchema); keys it does not know are kept, as a later version may add some. */
const TableSchemaDocument = z.looseObject({
  version: z.literal(SCHEMA_DOCUMENT_VERSION),
  table: name,
  sourceTableId: name,
  firstExportDate: date,
  lastExportDate: date,
  columns: z.array(
    z.looseObject({
      name,
      header: z.string().optional(),
      type: z.enum(Object.values(ColumnType) as [ColumnType, ...ColumnType[]]),
      textOf: name.optional(),
      firstSeen: date,
      lastSeen: date,
    }),
  ),
  tableFormat: z.literal('iceberg').optional(),
  key: z.array(name).min(1).optional(),
  pseudonymized: z.array(name).optional(),
  dropped: z.array(name).optional(),
  exportDates: z.array(date).optional(),
  latestExport: z
    .looseObject({
      exportDate: date,
      runId: name,
      rows: z.int().min(0),
      columns: z.array(z.looseObject({ name, header: z.string() })),
    })
    .optional(),
}) satisfies z.ZodType<TableSchema>

const parseRegistry = (store: WarehouseStore, table: string, body: Buffer): TableSchema =>
  parseStateObject(TableSchemaDocument, body, { root: store.root, key: schemaKey(table) })

/** The table's registered schema, undefined before its first export; STATE_CORRUPT when it has the wrong shape. */
export const readTableSchema = async (store: WarehouseStore, table: string): Promise<TableSchema | undefined> => {
  const bytes = await store.getObject(schemaKey(table))
  return bytes === undefined ? undefined : parseRegistry(store, table, bytes)
}

/** Conditional writes lost in a row before giving up: each loss means another run's change was merged in. */
const MAX_REGISTER_ATTEMPTS = 8

/**
 * Registers this export's schema without losing another run's: read the registry with its version, merge, and
 * write only if nobody wrote in between; else read again. Returns the schema as registered.
 */
export const registerTableSchema = async (
  store: WarehouseStore,
  mine: TableSchema,
  /** Columns dropped as personal data: removed from the registry if it has them. */
  removed: readonly string[] = [],
): Promise<TableSchema> => {
  const key = schemaKey(mine.table)
  for (let attempt = 1; ; attempt++) {
    const current = await store.getObjectVersion(key)
    // Never merged from a document it could not read: that would write the garbage back (STATE_CORRUPT instead).
    const registered = current === undefined ? undefined : parseRegistry(store, mine.table, current.body)
    const merged = mergeSchemas(registered, mine, removed)
    try {
      await store.putObjectIfVersion(key, `${JSON.stringify(merged, null, 2)}\n`, 'application/json', current?.version)
      return merged
    } catch (error) {
      if (!(error instanceof WriteConflictError) || attempt >= MAX_REGISTER_ATTEMPTS) throw error
    }
  }
}

/**
 * Replaces the registry with `change` of it (a rewrite of history moving every column at once, which a merge, that
 * keeps published types, cannot): read with its version, changed, written only if nobody wrote in between, else
 * again. Returns the schema as written; nothing is written when the change leaves it as it is.
 */
export const replaceTableSchema = async (
  store: WarehouseStore,
  table: string,
  change: (registered: TableSchema) => TableSchema,
): Promise<TableSchema> => {
  const key = schemaKey(table)
  for (let attempt = 1; ; attempt++) {
    const current = await store.getObjectVersion(key)
    if (current === undefined)
      throw new StateCorruptError({ where: store.root, key, reason: 'it is gone', hint: REGISTRY_GONE })
    const registered = parseRegistry(store, table, current.body)
    // Written as a merge writes it (no empty `dropped`), so the same settings give the same registry either way.
    const changed = withoutEmptyDrops(change(registered))
    const text = `${JSON.stringify(changed, null, 2)}\n`
    if (text === current.body.toString('utf8')) return changed
    try {
      await store.putObjectIfVersion(key, text, 'application/json', current.version)
      return changed
    } catch (error) {
      if (!(error instanceof WriteConflictError) || attempt >= MAX_REGISTER_ATTEMPTS) throw error
    }
  }
}

const REGISTRY_GONE =
  'the registry was removed while the table was rewritten; re-export the table, then run the rewrite again'
