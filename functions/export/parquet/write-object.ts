/**
 * Pass 2: reads the spooled row groups back, converts them to the types the write plan fixed, encodes Parquet and
 * streams it into one upload that commits only after the last byte. Any failure aborts the upload.
 */
import type { WritePlan } from '../catalog/registry.ts'
import { LINEAGE_COLUMNS, lineageValues, type RunIdentity } from '../lineage.ts'
import type { RowGroupSpool, SpooledRowGroup } from '../normalize/spool.ts'
import type { WarehouseStore } from '../publish/store.ts'
import type { PublishedObject } from '../run-record.ts'
import { type ColumnValues, convertColumn, type ParquetColumn, ParquetFileEncoder } from './encode.ts'

export const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet'

export interface ParquetObjectRequest {
  readonly store: WarehouseStore
  readonly key: string
  readonly plan: WritePlan
  readonly spool: RowGroupSpool
  readonly sourceTableId: string
  readonly run: RunIdentity
}

export const writeParquetObject = async (
  request: ParquetObjectRequest,
): Promise<{ rows: number; object: PublishedObject }> => {
  const { store, key, plan, spool, sourceTableId, run } = request
  const upload = await store.openUpload(key, PARQUET_CONTENT_TYPE)
  try {
    const columns: ParquetColumn[] = [...plan.schema.columns, ...LINEAGE_COLUMNS].map(({ name, type }) => ({
      name,
      type,
    }))
    const encoder = new ParquetFileEncoder(columns, (chunk) => upload.write(chunk), {
      keyValueMetadata: { 'inventory.source_table_id': sourceTableId, 'inventory.export_run_id': run.runId },
    })
    for await (const group of spool.groups()) {
      await encoder.writeRowGroup(
        [...planValues(plan, group), ...lineageValues(group, sourceTableId, run)],
        group.rowCount,
      )
    }
    await encoder.finish()
    const committed = await upload.commit()
    return { rows: encoder.rowsWritten, object: { key, location: committed.location, bytes: committed.bytes } }
  } catch (error) {
    await upload.abort().catch(() => undefined)
    throw error
  }
}

/** One array per registry column: converted CSV values, companion texts of misfits, or NULLs. */
const planValues = (plan: WritePlan, group: SpooledRowGroup): ColumnValues[] => {
  const values = new Array<ColumnValues>(plan.sources.length)
  plan.sources.forEach((source, position) => {
    if (source.kind === 'csv') {
      const cells = group.columns[source.index]!
      if (source.companion === undefined) values[position] = convertColumn(source.type, cells)
      else {
        const texts: ColumnValues = new Array(group.rowCount).fill(null)
        values[position] = convertColumn(source.type, cells, (row, text) => {
          texts[row] = text
        })
        values[source.companion] = texts
      }
    } else if (source.kind === 'absent') values[position] = new Array(group.rowCount).fill(null)
  })
  return values
}
