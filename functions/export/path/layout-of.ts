/** Which layout a table's dates are in, and where its Iceberg commits move the table's metadata pointer. */
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { TableConfig } from '../core/config.ts'
import { TableFormatChangedError } from '../core/errors.ts'
import { currentDataFiles, icebergLayout } from '../iceberg/iceberg-layout.ts'
import { storeMetadataPointer } from '../iceberg/store-pointer.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { hiveLayout, type TableLayout } from '../publish/table-layout.ts'
import type { TableSchema } from '../schema/table-schema.ts'

/** The store's root as a URI readers open files by: `s3://bucket/prefix`, or a folder as `file://`. */
const rootUri = (store: WarehouseStore): string =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(store.root) ? store.root.replace(/\/+$/, '') : `file://${store.root}`

const icebergLocation = (store: WarehouseStore, table: string) => ({
  table,
  key: table,
  uri: `${rootUri(store)}/${table}`,
})

/**
 * The data files a query of a local Iceberg table reads (its current snapshot's), or undefined when the table is
 * not an Iceberg table: one with a pointer in the store.
 */
export const localIcebergFiles = async (
  store: WarehouseStore,
  table: string,
): Promise<{ readonly key: string; readonly exportDate: string }[] | undefined> => {
  const pointer = storeMetadataPointer(store)
  if ((await pointer.read(table)) === undefined) return undefined
  return currentDataFiles(store, pointer, icebergLocation(store, table))
}

/**
 * Refuses a table whose registry says its dates are in the other layout than its setting (TABLE_FORMAT_CHANGED),
 * before anything is downloaded; a table with nothing published yet takes its setting's layout.
 */
export const refuseLayoutChange = (
  table: Pick<TableConfig, 'id' | 'name' | 'tableFormat'>,
  stored: Pick<TableSchema, 'tableFormat'> | undefined,
): void => {
  if (stored === undefined) return
  const configured = table.tableFormat ?? 'hive'
  const published = stored.tableFormat ?? 'hive'
  if (configured === published) return
  throw new TableFormatChangedError({ tableId: table.id, tableName: table.name, configured, published })
}

/** The table's layout; an Iceberg table's pointer is the catalog's (Glue on AWS), or an object in the store. */
export const layoutOf = (
  table: Pick<TableConfig, 'name' | 'tableFormat'>,
  store: WarehouseStore,
  catalog?: TableCatalog | undefined,
): TableLayout =>
  table.tableFormat === 'iceberg'
    ? icebergLayout(store, catalog?.metadataPointer ?? storeMetadataPointer(store), icebergLocation(store, table.name))
    : hiveLayout(store, table.name)
