/** Which layout a table's dates are in, and where its Iceberg commits move the table's metadata pointer. */
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { TableConfig } from '../core/config.ts'
import { icebergLayout } from '../iceberg/iceberg-layout.ts'
import { storeMetadataPointer } from '../iceberg/store-pointer.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { hiveLayout, type TableLayout } from '../publish/table-layout.ts'

/** The store's root as a URI readers open files by: `s3://bucket/prefix`, or a folder as `file://`. */
const rootUri = (store: WarehouseStore): string =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(store.root) ? store.root.replace(/\/+$/, '') : `file://${store.root}`

/** The table's layout; an Iceberg table's pointer is the catalog's (Glue on AWS), or an object in the store. */
export const layoutOf = (
  table: Pick<TableConfig, 'name' | 'tableFormat'>,
  store: WarehouseStore,
  catalog?: TableCatalog | undefined,
): TableLayout =>
  table.tableFormat === 'iceberg'
    ? icebergLayout(store, catalog?.metadataPointer ?? storeMetadataPointer(store), {
        table: table.name,
        key: table.name,
        uri: `${rootUri(store)}/${table.name}`,
      })
    : hiveLayout(store, table.name)
