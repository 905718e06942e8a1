/**
 * One table's path, top to bottom: download -> decode -> parse -> name and type columns (pass 1, spooled)
 * -> encode Parquet (pass 2) -> publish as one object that commits at the end.
 * Any failure aborts the upload, so the previous data for the date stays as it was.
 */
import { createHash } from 'node:crypto'
import { planWrite, readTableSchema, type TableSchema, type WritePlan, writeTableSchema } from './catalog/registry.ts'
import type { TableConfig } from './config.ts'
import { ColumnType, DATA_OBJECT_NAME, LineageColumn, PARTITION_KEY } from './constants.ts'
import { type DecodeReport, decodeToUtf8 } from './csv/decode.ts'
import { openCsv } from './csv/parse.ts'
import type { InventoryClient } from './inventory/client.ts'
import { nameColumns } from './normalize/columns.ts'
import { DEFAULT_ROW_GROUP_LIMITS, RowGroupBuilder, type RowGroupLimits } from './normalize/row-groups.ts'
import { RowGroupSpool, type SpooledRowGroup } from './normalize/spool.ts'
import { ColumnTypeInferrer } from './normalize/types.ts'
import { type ColumnValues, convertColumn, type ParquetColumn, ParquetFileEncoder } from './parquet/encode.ts'
import type { WarehouseStore } from './publish/store.ts'
import type { ColumnRecord, PublishedObject } from './run-record.ts'

export interface RunIdentity {
  readonly runId: string
  readonly exportDate: string
  readonly exportedAt: Date
}

export interface TableProgress {
  readonly bytes: number
  readonly rows: number
}

export interface TableExportContext {
  readonly client: InventoryClient
  readonly store: WarehouseStore
  readonly run: RunIdentity
  /** Folder for the pass-1 spool (the Lambda's /tmp, or the OS temp folder). */
  readonly spoolDirectory: string
  readonly signal?: AbortSignal | undefined
  readonly rowGroupLimits?: RowGroupLimits
  readonly onProgress?: (progress: TableProgress) => void
  /** Told about a table whose columns changed (the Glue catalog on AWS); absent locally. */
  readonly catalog?: TableCatalog | undefined
}

export interface TableCatalog {
  publish(schema: TableSchema): Promise<void>
}

export interface TableExportResult {
  readonly httpStatus: number
  readonly attempts: number
  readonly bytesReceived: number
  readonly sha256: string
  readonly encoding: string
  readonly delimiter: string
  readonly rows: number
  readonly columns: readonly ColumnRecord[]
  readonly objects: readonly PublishedObject[]
  readonly warnings: readonly string[]
}

export const LINEAGE_COLUMNS: readonly ColumnRecord[] = [
  { name: LineageColumn.RUN_ID, type: ColumnType.STRING },
  { name: LineageColumn.EXPORTED_AT, type: ColumnType.TIMESTAMP },
  { name: LineageColumn.SOURCE_TABLE_ID, type: ColumnType.STRING },
  { name: LineageColumn.ROW_NUMBER, type: ColumnType.BIGINT },
]

/** Key of a table's one object for an export date. */
export const dataObjectKey = (tableName: string, exportDate: string): string =>
  `${tableName}/${PARTITION_KEY}=${exportDate}/${DATA_OBJECT_NAME}`

/** Bytes received so far, readable even when the export throws (for the run record). */
export interface TableExportProbe {
  bytesReceived: number
  httpStatus?: number
  attempts: number
}

export const exportTable = async (
  table: TableConfig,
  context: TableExportContext,
  probe: TableExportProbe = { bytesReceived: 0, attempts: 0 },
): Promise<TableExportResult> => {
  const download = await context.client.downloadTable(table.id, 'csv', context.signal)
  probe.httpStatus = download.status
  probe.attempts = download.attempts
  const hash = createHash('sha256')
  const decodeReport: DecodeReport = { encoding: table.encoding, bom: false }
  const spool = new RowGroupSpool(context.spoolDirectory)
  try {
    const hashed = tapBytes(download.body, (chunk) => {
      hash.update(chunk)
      probe.bytesReceived += chunk.length
    })
    const csv = await openCsv(decodeToUtf8(hashed, { tableId: table.id, ...table }, decodeReport), {
      tableId: table.id,
      delimiter: table.delimiter,
      shortRows: table.shortRows,
    })
    const named = nameColumns(
      csv.header,
      LINEAGE_COLUMNS.map((c) => c.name),
    )
    const columnNames = named.map((c) => c.name)
    const inferrer = new ColumnTypeInferrer({ tableId: table.id, columnNames, forced: table.columnTypes })
    const builder = new RowGroupBuilder(columnNames.length, context.rowGroupLimits ?? DEFAULT_ROW_GROUP_LIMITS)
    const accept = async (group: ReturnType<RowGroupBuilder['flush']>) => {
      if (!group) return
      group.columns.forEach((values, index) => {
        inferrer.observe(index, values, group.firstRow)
      })
      await spool.append(group)
      context.onProgress?.({ bytes: probe.bytesReceived, rows: builder.rowsSeen })
    }
    for await (const batch of csv.batches) {
      for (const record of batch) {
        const group = builder.add(record)
        if (group) await accept(group)
      }
    }
    await accept(builder.flush())

    const plan = planWrite(await readTableSchema(context.store, table.name), {
      table: table.name,
      sourceTableId: table.id,
      exportDate: context.run.exportDate,
      columns: named,
      inferred: inferrer.types(),
      fits: (index, type) => inferrer.fits(index, type),
    })
    const columns: ColumnRecord[] = [
      ...plan.schema.columns.map(({ name, header, type }) =>
        header === undefined ? { name, type } : { name, header, type },
      ),
      ...LINEAGE_COLUMNS,
    ]
    const key = dataObjectKey(table.name, context.run.exportDate)
    const written = await writeParquetObject(context, table, key, plan, spool)
    // The registry is written after the catalog: if the catalog update fails, the next run sees the change again.
    if (plan.shapeChanged && context.catalog) await context.catalog.publish(plan.schema)
    await writeTableSchema(context.store, plan.schema)
    return {
      httpStatus: download.status,
      attempts: download.attempts,
      bytesReceived: probe.bytesReceived,
      sha256: hash.digest('hex'),
      encoding: decodeReport.encoding,
      delimiter: csv.delimiter,
      rows: written.rows,
      columns,
      objects: [written.object],
      warnings: unknownOverrides(table, columnNames),
    }
  } finally {
    download.cancel()
    await spool.dispose()
  }
}

const writeParquetObject = async (
  context: TableExportContext,
  table: TableConfig,
  key: string,
  plan: WritePlan,
  spool: RowGroupSpool,
): Promise<{ rows: number; object: PublishedObject }> => {
  const upload = await context.store.openUpload(key, 'application/vnd.apache.parquet')
  try {
    const parquetColumns: ParquetColumn[] = [...plan.schema.columns, ...LINEAGE_COLUMNS].map(({ name, type }) => ({
      name,
      type,
    }))
    const encoder = new ParquetFileEncoder(parquetColumns, (chunk) => upload.write(chunk), {
      keyValueMetadata: { 'inventory.source_table_id': table.id, 'inventory.export_run_id': context.run.runId },
    })
    for await (const group of spool.groups()) {
      const values = [...dataValues(plan, group), ...lineageValues(group, table, context.run)]
      await encoder.writeRowGroup(values, group.rowCount)
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
const dataValues = (plan: WritePlan, group: SpooledRowGroup): ColumnValues[] => {
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

const lineageValues = (group: SpooledRowGroup, table: TableConfig, run: RunIdentity): ColumnValues[] => {
  const { rowCount, firstRow } = group
  const rowNumbers: ColumnValues = new Array(rowCount)
  for (let i = 0; i < rowCount; i++) rowNumbers[i] = BigInt(firstRow + i)
  return [
    new Array(rowCount).fill(run.runId),
    new Array(rowCount).fill(run.exportedAt.getTime()),
    new Array(rowCount).fill(table.id),
    rowNumbers,
  ]
}

const unknownOverrides = (table: TableConfig, columnNames: readonly string[]): string[] =>
  Object.keys(table.columnTypes)
    .filter((name) => !columnNames.includes(name))
    .map(
      (name) => `columnTypes names "${name}", which is not a column of this table (columns: ${columnNames.join(', ')})`,
    )

async function* tapBytes(source: AsyncIterable<Buffer>, tap: (chunk: Buffer) => void): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    tap(chunk)
    yield chunk
  }
}
