/**
 * One table's path, top to bottom: download -> decode -> parse -> name and type columns (pass 1, spooled)
 * -> plan against the schema registry -> encode Parquet (pass 2) -> publish one object that commits at the end
 * -> catalog and registry. Any failure aborts the uploads, so the previous data for the date stays as it was.
 */
import { createHash } from 'node:crypto'
import { planWrite, readTableSchema, type TableSchema, writeTableSchema } from './catalog/registry.ts'
import type { TableConfig } from './config.ts'
import { DATA_OBJECT_NAME, PARTITION_KEY } from './constants.ts'
import { type DecodeReport, decodeToUtf8 } from './csv/decode.ts'
import { openCsv } from './csv/parse.ts'
import type { InventoryClient } from './inventory/client.ts'
import { LINEAGE_COLUMN_NAMES, LINEAGE_COLUMNS, type RunIdentity } from './lineage.ts'
import { nameColumns } from './normalize/columns.ts'
import {
  DEFAULT_ROW_GROUP_LIMITS,
  type RowGroup,
  RowGroupBuilder,
  type RowGroupLimits,
} from './normalize/row-groups.ts'
import { RowGroupSpool } from './normalize/spool.ts'
import { ColumnTypeInferrer } from './normalize/types.ts'
import { writeParquetObject } from './parquet/write-object.ts'
import type { WarehouseStore } from './publish/store.ts'
import { openRawArchive, type RawArchiveWriter } from './raw-archive.ts'
import type { ColumnRecord, PublishedObject } from './run-record.ts'

export { LINEAGE_COLUMNS, type RunIdentity }

export interface TableProgress {
  readonly bytes: number
  readonly rows: number
}

export interface TableCatalog {
  publish(schema: TableSchema): Promise<void>
}

export interface TableExportContext {
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

/** The bytes of one table's CSV: a download from the service, or an archived body. */
export interface TableBytes {
  readonly httpStatus: number
  readonly attempts: number
  readonly body: AsyncIterable<Buffer>
  /** Frees the source when the path stops early. */
  readonly cancel: () => void
  /** Whether to archive these bytes (never when they come from the archive). */
  readonly archive: boolean
}

/** What the run record needs even when the export throws. */
export interface TableExportProbe {
  bytesReceived: number
  httpStatus?: number
  attempts: number
}

/** Key of a table's one object for an export date. */
export const dataObjectKey = (tableName: string, exportDate: string): string =>
  `${tableName}/${PARTITION_KEY}=${exportDate}/${DATA_OBJECT_NAME}`

export const exportTable = async (
  table: TableConfig,
  context: TableExportContext & { readonly client: InventoryClient },
  probe: TableExportProbe = { bytesReceived: 0, attempts: 0 },
): Promise<TableExportResult> => {
  const download = await context.client.downloadTable(table.id, 'csv', context.signal)
  const bytes = { ...download, httpStatus: download.status, archive: table.archiveRaw }
  return landTable(table, bytes, context, probe)
}

/** Everything after the download: from bytes to a published, registered object. */
export const landTable = async (
  table: TableConfig,
  source: TableBytes,
  context: TableExportContext,
  probe: TableExportProbe = { bytesReceived: 0, attempts: 0 },
): Promise<TableExportResult> => {
  probe.httpStatus = source.httpStatus
  probe.attempts = source.attempts
  const hash = createHash('sha256')
  const decodeReport: DecodeReport = { encoding: table.encoding, bom: false }
  const spool = new RowGroupSpool(context.spoolDirectory)
  const raw = source.archive ? await openRawArchive(context.store, table.name, context.run.exportDate) : undefined
  try {
    const received = tapBytes(source.body, async (chunk) => {
      hash.update(chunk)
      probe.bytesReceived += chunk.length
      await raw?.write(chunk)
    })
    const csv = await openCsv(decodeToUtf8(received, { tableId: table.id, ...table }, decodeReport), {
      tableId: table.id,
      delimiter: table.delimiter,
      shortRows: table.shortRows,
    })
    const named = nameColumns(csv.header, LINEAGE_COLUMN_NAMES)
    const columnNames = named.map((c) => c.name)
    const inferrer = new ColumnTypeInferrer({ tableId: table.id, columnNames, forced: table.columnTypes })
    const builder = new RowGroupBuilder(columnNames.length, context.rowGroupLimits ?? DEFAULT_ROW_GROUP_LIMITS)
    const accept = async (group: RowGroup | undefined) => {
      if (!group) return
      group.columns.forEach((values, index) => {
        inferrer.observe(index, values, group.firstRow)
      })
      await spool.append(group)
    }
    for await (const batch of csv.batches) {
      for (const record of batch) {
        const group = builder.add(record)
        if (group) await accept(group)
      }
      // Once per parsed chunk: the telemetry decides how often to show it.
      context.onProgress?.({ bytes: probe.bytesReceived, rows: builder.rowsSeen })
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
    const key = dataObjectKey(table.name, context.run.exportDate)
    const written = await writeParquetObject({
      store: context.store,
      key,
      plan,
      spool,
      sourceTableId: table.id,
      run: context.run,
    })
    const warnings = unknownOverrides(table, columnNames)
    const archived = raw ? await commitArchive(raw, warnings) : undefined
    // The registry is written after the catalog: if the catalog update fails, the next run sees the change again.
    if (plan.shapeChanged && context.catalog) await context.catalog.publish(plan.schema)
    await writeTableSchema(context.store, plan.schema)
    return {
      httpStatus: source.httpStatus,
      attempts: source.attempts,
      bytesReceived: probe.bytesReceived,
      sha256: hash.digest('hex'),
      encoding: decodeReport.encoding,
      delimiter: csv.delimiter,
      rows: written.rows,
      columns: [...plan.schema.columns.map(columnRecord), ...LINEAGE_COLUMNS],
      objects: archived ? [written.object, archived] : [written.object],
      warnings,
    }
  } finally {
    source.cancel()
    await raw?.abort().catch(() => undefined)
    await spool.dispose()
  }
}

const columnRecord = ({ name, header, type }: ColumnRecord): ColumnRecord =>
  header === undefined ? { name, type } : { name, header, type }

/** The archive commits after the data; a failure to archive is reported but does not undo good data. */
const commitArchive = async (raw: RawArchiveWriter, warnings: string[]): Promise<PublishedObject | undefined> => {
  try {
    const { key, bytes } = await raw.commit()
    return { key, location: key, bytes }
  } catch (error) {
    warnings.push(`the raw archive was not written: ${(error as Error).message}`)
    return undefined
  }
}

const unknownOverrides = (table: TableConfig, columnNames: readonly string[]): string[] =>
  Object.keys(table.columnTypes)
    .filter((name) => !columnNames.includes(name))
    .map(
      (name) => `columnTypes names "${name}", which is not a column of this table (columns: ${columnNames.join(', ')})`,
    )

async function* tapBytes(source: AsyncIterable<Buffer>, tap: (chunk: Buffer) => Promise<void>): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    await tap(chunk)
    yield chunk
  }
}
