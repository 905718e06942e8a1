/**
 * One table's path, top to bottom: open the bytes at the table source (a download, or the raw archive) -> decode
 * -> parse -> record batches (on a thread of its own when there is a second core) -> infer types, convert and encode Parquet -> guards (compare with the latest published
 * export; a hold publishes nothing) -> one object that commits at the end -> catalog and registry. Any failure
 * aborts the uploads, so the previous data for the date stays as it was.
 */
import { createHash } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { athenaTableDefinition } from '../catalog/athena.ts'
import { viewsLeftOut } from '../catalog/glue-inputs.ts'
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { GuardsConfig, TableConfig } from '../core/config.ts'
import { DATA_OBJECT_NAME, LOCAL_GLUE_DATABASE, PARTITION_KEY, type TableFormatName } from '../core/constants.ts'
import { type ExportError, GuardHoldError, toExportError } from '../core/errors.ts'
import { LINEAGE_COLUMNS, RESERVED_COLUMN_NAMES, type RunIdentity } from '../core/lineage.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { ColumnRecord, GuardFinding, PublishedObject } from '../core/run-record.ts'
import type { ParseThread } from '../csv/parse-worker.ts'
import type { RecordLimits } from '../csv/record-guard.ts'
import { checkGuards, guardSettings, nextBaseline } from '../guards/guards.ts'
import { nameColumns } from '../normalize/columns.ts'
import { controlColumns, controlRecords } from '../normalize/personal-data.ts'
import type { BatchLimits } from '../normalize/record-batch.ts'
import { type KeyCounter, type KeyReport, keyWarnings, openKeyCounter } from '../normalize/row-key.ts'
import { type RowGroupLimits, TableEncoder } from '../parquet/table-encoder.ts'
import { ParquetUpload } from '../parquet/write-object.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { recordExportDate } from '../schema/export-dates.ts'
import { mergeSchemas, withoutColumns } from '../schema/merge.ts'
import type { WritePlan } from '../schema/plan.ts'
import { readTableSchema, registerTableSchema } from '../schema/registry.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import { KEYS_SPILL_SUFFIX, newSpoolFile, SpoolKind } from '../scratch/spool-files.ts'
import { openRawArchive, type RawArchiveWriter } from '../source/raw-archive.ts'
import type { TableBytes, TableSource } from '../source/table-source.ts'
import { openTableRead, type TableRead } from './read-table.ts'

export { LINEAGE_COLUMNS, type RunIdentity, type TableCatalog }

export interface TableProgress {
  readonly bytes: number
  readonly rows: number
}

export interface TableExportContext {
  readonly store: WarehouseStore
  readonly run: RunIdentity
  /** Folder for the spool of the rare second pass (the Lambda's /tmp, or the OS temp folder). */
  readonly spoolDirectory: string
  readonly signal?: AbortSignal | undefined
  /** @default DEFAULT_BATCH_LIMITS */
  readonly batchLimits?: BatchLimits
  /** The `limits` section: how wide and long a record may be. @default DEFAULT_RECORD_LIMITS */
  readonly limits?: RecordLimits | undefined
  /** @default DEFAULT_ROW_GROUP_LIMITS */
  readonly rowGroupLimits?: RowGroupLimits
  /** @default 'auto': parsing gets a thread of its own when there is more than one core, every core from two */
  readonly parseThread?: ParseThread
  /** Threads parsing may use (core/parse-threads.ts); default: as many as this process's cores pay for. */
  readonly parseThreads?: number | undefined
  readonly onProgress?: (progress: TableProgress) => void
  /** Reconciled with the table's definition after every publish (the Glue catalog on AWS); absent locally. */
  readonly catalog?: TableCatalog | undefined
  /** `export.guards`: compare with the previous published export before publishing. @default no guards */
  readonly guards?: GuardsConfig | undefined
  /** Publish what a guard would hold (an operator checked the change). */
  readonly acceptChanges?: boolean | undefined
  /** The key of `columns.pseudonymize`; required by a table that pseudonymizes (runExport checks it first). */
  readonly pseudonymizationKey?: PseudonymizationKey | undefined
}

export interface TableExportResult {
  /** Absent when the bytes did not come over HTTP (the raw archive). */
  readonly httpStatus?: number | undefined
  readonly bytesReceived: number
  readonly sha256: string
  readonly format: TableFormatName
  readonly encoding: string
  /** Absent for a workbook. */
  readonly delimiter?: string | undefined
  /** The worksheet read, for a workbook. */
  readonly sheet?: string | undefined
  readonly rows: number
  readonly columns: readonly ColumnRecord[]
  readonly objects: readonly PublishedObject[]
  readonly warnings: readonly string[]
  /** For a table with a key: its empty and repeated keys. */
  readonly keys?: KeyReport
  /** Guards that fired and let the table through (warned or accepted). */
  readonly guards: readonly GuardFinding[]
}

/** One attempt at a table: what it published, or the coded failure and what was received before it. */
export type TableAttempt =
  | { readonly ok: true; readonly result: TableExportResult }
  | {
      readonly ok: false
      readonly error: ExportError
      /** Whether the source opened the bytes (the headers arrived) before the failure. */
      readonly opened: boolean
      readonly httpStatus?: number | undefined
      readonly bytesReceived: number
    }

/** Key of a table's one object for an export date. */
export const dataObjectKey = (tableName: string, exportDate: string): string =>
  `${tableName}/${PARTITION_KEY}=${exportDate}/${DATA_OBJECT_NAME}`

/** Opens the table's bytes at the source and lands them; never throws. */
export const exportTable = async (
  table: TableConfig,
  source: TableSource,
  context: TableExportContext & { readonly attempt: number },
): Promise<TableAttempt> => {
  let bytes: TableBytes | undefined
  try {
    const { signal, attempt } = context
    bytes = await source.open(table, { exportDate: context.run.exportDate, attempt, signal })
    return { ok: true, result: await landTable(table, bytes, context) }
  } catch (error) {
    return {
      ok: false,
      error: toExportError(error, table.id),
      opened: bytes !== undefined,
      httpStatus: bytes?.httpStatus,
      bytesReceived: bytes?.received() ?? 0,
    }
  }
}

/** Everything after the download: from bytes to a published, registered object. */
export const landTable = async (
  table: TableConfig,
  source: TableBytes,
  context: TableExportContext,
): Promise<TableExportResult> => {
  const hash = createHash('sha256')
  const upload = new ParquetUpload(context.store, dataObjectKey(table.name, context.run.exportDate))
  let spoolPath: string | undefined
  let read: TableRead | undefined
  let encoder: TableEncoder | undefined
  let keys: KeyCounter | undefined
  const raw = source.archive
    ? await openRawArchive(context.store, table.name, context.run.exportDate, table.format)
    : undefined
  try {
    const received = tapBytes(source.body, async (chunk) => {
      hash.update(chunk)
      await raw?.write(chunk)
    })
    read = await openTableRead(table, received, context)
    // Named over the whole header (so the names do not depend on what is dropped), then controlled before any
    // stage reads a value: dropped and raw personal columns go no further than this.
    const controlled = controlColumns(
      table.id,
      table.columns,
      nameColumns(read.records.header, RESERVED_COLUMN_NAMES),
      table.columnTypes,
    )
    const parsed = controlRecords(read.records, controlled, context.pseudonymizationKey)
    const named = controlled.columns
    const stored = await readTableSchema(context.store, table.name)
    // A column dropped now is gone from the registry too: nothing keeps writing it, nor compares with it.
    const previous = stored && withoutColumns(stored, table.columns.drop)
    spoolPath = await newSpoolFile(context.spoolDirectory, SpoolKind.batches)
    keys =
      table.key &&
      openKeyCounter(
        table.id,
        table.key,
        named.map((c) => c.name),
        previous?.columns.map((c) => c.name) ?? [],
        `${spoolPath}${KEYS_SPILL_SUFFIX}`,
      )
    encoder = new TableEncoder(
      {
        tableId: table.id,
        table: table.name,
        exportDate: context.run.exportDate,
        columns: named,
        forced: controlled.forced,
        previous,
        run: context.run,
        spoolPath,
        rowGroupLimits: context.rowGroupLimits,
      },
      upload,
    )
    let rowsSeen = 0
    for await (const batch of parsed.batches) {
      // Once the body is in, only this stops a table that overruns export.timeouts.tableSeconds (a spooled workbook).
      context.signal?.throwIfAborted()
      keys?.observe(batch)
      encoder.push(batch)
      parsed.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
      rowsSeen += batch.rowCount
      // Once per batch (about a MB of CSV): the telemetry decides how often to show it.
      context.onProgress?.({ bytes: source.received(), rows: rowsSeen })
      await upload.drained()
    }
    const encoded = await encoder.finish()
    const { rows } = encoded
    const plan = withChangeHistory(encoded.plan, table)
    const snapshot = {
      exportDate: context.run.exportDate,
      runId: context.run.runId,
      rows,
      columns: named.map(({ name, header }) => ({ name, header })),
    }
    const settings = context.guards && guardSettings(context.guards, table.guards)
    const guards = checkGuards(previous?.latestExport, snapshot, settings, context.acceptChanges ?? false)
    if (guards.some((g) => g.action === 'held')) {
      throw new GuardHoldError({ tableId: table.id, tableName: table.name, rows, findings: guards })
    }
    context.signal?.throwIfAborted()
    // The catalog's documented rules are checked before anything moves: a definition it would refuse leaves the
    // previous date wholly in place (data, registry, run index, catalog).
    const mine = { ...plan.schema, latestExport: nextBaseline(previous?.latestExport, snapshot) }
    context.catalog?.check(mergeSchemas(previous, mine, table.columns.drop))
    const object = await upload.commit()
    // The date joins the dates relation right after its data, before the registry and the catalog (see there).
    await recordExportDate(context.store, table.name, context.run.exportDate, previous?.exportDates)
    const details = read.details()
    const warnings = [
      ...(source.warnings ?? []),
      ...details.warnings,
      ...unknownOverrides(
        table,
        named.map((c) => c.name),
      ),
    ]
    const keyReport = keys?.report()
    if (keyReport) warnings.push(...keyWarnings(keyReport))
    const archived = raw ? await commitArchive(raw, warnings) : undefined
    // The registry is merged with whatever another run registered meanwhile, and the catalog told the merged
    // schema after it is written: the date is then in place with its registry and run index whatever the catalog
    // answers, and every run reconciles the catalog with the registry, so the next run retries a failed update.
    const registered = await registerTableSchema(context.store, mine, table.columns.drop)
    // Locally there is no catalog to tell; `npm run query` leaves out the same views, so the run says so too.
    warnings.push(
      ...(context.catalog
        ? await publishCatalog(context.catalog, registered)
        : localViewsLeftOut(registered, context.store.root)),
    )
    return {
      httpStatus: source.httpStatus,
      bytesReceived: source.received(),
      sha256: hash.digest('hex'),
      format: details.format,
      encoding: details.encoding,
      delimiter: details.delimiter,
      sheet: details.sheet,
      rows,
      columns: [...plan.schema.columns.map(columnRecord), ...LINEAGE_COLUMNS],
      objects: archived ? [object, archived] : [object],
      warnings,
      ...(keyReport ? { keys: keyReport } : {}),
      guards,
    }
  } finally {
    source.cancel()
    encoder?.close()
    keys?.close()
    if (spoolPath !== undefined) await rm(spoolPath, { force: true })
    await read?.records.close()
    await upload.abort()
    await raw?.abort().catch(() => undefined)
  }
}

/**
 * The registry keeps the key, so the catalog and `npm run query` can build `<table>_changes` from it; the dates
 * the view pairs live in the dates relation (schema/export-dates.ts), not here. A registry that still lists
 * `exportDates` (written before the relation existed) is read once for them and written back without.
 */
const withChangeHistory = (plan: WritePlan, table: TableConfig) => {
  const { key: _, exportDates: _legacy, ...schema } = plan.schema
  return { ...plan, schema: { ...schema, ...(table.key ? { key: table.key } : {}) } }
}

/** The catalog's warnings; a catalog that did not take the update is reported with the table, published all the same. */
const publishCatalog = async (catalog: TableCatalog, schema: TableSchema): Promise<readonly string[]> => {
  try {
    return await catalog.publish(schema)
  } catch (error) {
    const reason = toExportError(error).message.replace(/\s*\n\s*/g, ' ')
    return [
      `the catalog was not updated (${reason}); the date's data, registry and run index are in place, and the next run updates the catalog`,
    ]
  }
}

const localViewsLeftOut = (schema: TableSchema, root: string): string[] =>
  viewsLeftOut(athenaTableDefinition(schema, LOCAL_GLUE_DATABASE, `${root}/${schema.table}/`))

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
