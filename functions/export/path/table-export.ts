/**
 * One table's path, top to bottom, as steps that each return a value: state (the registry and the recorded erasure
 * requests, before anything is downloaded) -> open (the bytes at the table source, hashed and archived as they
 * pass) -> read (decode and parse, or the workbook) -> name and type -> drop erased rows -> baseline (what this
 * date's export compares with) -> encode Parquet -> guard (compare with the baseline; a hold publishes nothing)
 * -> commit (the one object, then the dates relation) -> archive -> register -> catalog -> expire (the dates past
 * the table's retention). Each side effect happens once, in its step. Any failure aborts the uploads, so the
 * previous data for the date stays as it was.
 */
import { createHash } from 'node:crypto'
import { rm } from 'node:fs/promises'
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { GuardsConfig, TableConfig } from '../core/config.ts'
import { type ExportError, toExportError } from '../core/errors.ts'
import { LINEAGE_COLUMNS, type RunIdentity } from '../core/lineage.ts'
import { splitThreads } from '../core/parse-threads.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { PublishedObject, TableOutcome } from '../core/run-record.ts'
import type { RecordLimits } from '../csv/record-guard.ts'
import { type KeyReport, keyWarnings, openKeyCounter } from '../normalize/row-key.ts'
import { TableEncoder } from '../parquet/table-encoder.ts'
import { ParquetUpload } from '../parquet/write-object.ts'
import type { WarehouseStore } from '../publish/store.ts'
import type { TableLayout } from '../publish/table-layout.ts'
import { recordExportDate } from '../schema/export-dates.ts'
import { recordedControls } from '../schema/history.ts'
import { mergeSchemas, withoutColumns } from '../schema/merge.ts'
import type { WritePlan } from '../schema/plan.ts'
import { registerTableSchema } from '../schema/registry.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import { KEYS_SPILL_SUFFIX, newSpoolFile, SpoolKind } from '../scratch/spool-files.ts'
import { openRawArchive, type RawArchiveWriter } from '../source/raw-archive.ts'
import type { TableBytes, TableSource } from '../source/table-source.ts'
import { guard, guardBaseline } from './guard-step.ts'
import { layoutOf, refuseLayoutChange } from './layout-of.ts'
import { type NamedTable, nameAndType, refuseRemovedControls } from './name-and-type.ts'
import { openTableRead } from './read-table.ts'
import { archiveUnlessErased, dropErased, holdErasedRows, readState, type StoredState } from './stored-state.ts'
import {
  catalogWarnings,
  columnRecord,
  expire,
  Held,
  purgeVersions,
  settledAcceptances,
  tapBytes,
  unknownOverrides,
  withChangeHistory,
} from './table-steps.ts'
import type { TableProgress } from './telemetry.ts'

interface TableExportContext {
  readonly store: WarehouseStore
  readonly run: RunIdentity
  /** Folder for the spool of the rare second pass (the Lambda's /tmp, or the OS temp folder). */
  readonly spoolDirectory: string
  readonly signal?: AbortSignal | undefined
  /** The `limits` section: how wide and long a record may be. */
  readonly limits: RecordLimits
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
  /** Reads the key for a table whose erasure requests need it when the run has none (path/stored-state.ts). */
  readonly readPseudonymizationKey?: (() => Promise<PseudonymizationKey>) | undefined
  /** A rewrite of the date's history: the registry and catalog are left to the rewrite (path/rewrite.ts). */
  readonly history?: HistoryRewrite | undefined
  /** Delete the earlier versions of what the date replaces (an erasure, a rewrite removing personal data). */
  readonly purgeVersions?: boolean | undefined
}

/** The schema to register, saying which layout the dates are in (an Iceberg table's; the Hive layout's is none). */
const withLayout = (schema: TableSchema, layout: TableLayout): TableSchema =>
  layout.format === 'iceberg' ? { ...schema, tableFormat: 'iceberg' } : schema

/** The context, with the layout the table's dates are in. */
type LayoutContext = TableExportContext & { readonly layout: TableLayout }

/** A date written again by `npm run rewrite`, against the schema the settings ask for. */
export interface HistoryRewrite {
  /** Used as the registry: the columns and types every date gets (schema/history.ts). */
  readonly schema: TableSchema
}

/** A landed table's outcome, but for what only the run knows: its attempts and how long they took. */
type LandedTable = Omit<TableOutcome, 'attempts' | 'durationMs' | 'error'>

/** One attempt at a table: its outcome, or the coded failure and what was received before it. */
export type TableAttempt =
  | { readonly ok: true; readonly outcome: LandedTable }
  | {
      readonly ok: false
      readonly error: ExportError
      /** Whether the source opened the bytes (the headers arrived) before the failure. */
      readonly opened: boolean
      readonly httpStatus?: number | undefined
      readonly bytesReceived: number
    }

/** Opens the table's bytes at the source and lands them; never throws. */
export const exportTable = async (
  table: TableConfig,
  source: TableSource,
  context: TableExportContext & { readonly attempt: number },
): Promise<TableAttempt> => {
  let bytes: TableBytes | undefined
  try {
    const { signal, attempt } = context
    const state = await readState(table, context.store, context)
    // Before the download: a table whose history is in the other layout is refused, whatever the service sends.
    refuseLayoutChange(table, state.stored)
    bytes = await source.open(table, { exportDate: context.run.exportDate, attempt, signal })
    const layout = layoutOf(table, context.store, context.catalog)
    return { ok: true, outcome: await landTable(table, bytes, state, { ...context, layout }) }
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

/** Everything after the bytes opened: from them to a published, registered and catalogued object. */
const landTable = async (
  table: TableConfig,
  bytes: TableBytes,
  { stored, erasures, key }: StoredState,
  context: LayoutContext,
): Promise<LandedTable> => {
  // What the steps open, released in reverse whichever way the path ends (the uploads abort unless committed).
  const held = new Held()
  try {
    const opened = await openBody(table, bytes, context, held)
    // The threads the edge granted: the parse's, and one to encode on when there are enough.
    const threads = splitThreads(context.parseThreads)
    const read = held.hold(
      await openTableRead(table, opened.body, { ...context, parseThreads: threads.parse, charset: bytes.charset }),
      (r) => r.records.close(),
    )
    const { history } = context
    const previous = stored && withoutColumns(stored, table.columns.drop)
    // Named after the registry is read: a column keeps its registered name by its header, wherever it moved.
    const pseudonymized = [...table.columns.pseudonymize, ...(bytes.pseudonyms ?? [])]
    const { named, erased } = dropErased(table, nameAndType(table, read.records, key, { previous }), erasures, {
      key,
      previous,
      pseudonymized,
    })
    if (history === undefined) refuseRemovedControls(table, stored, named.columns, bytes.pseudonyms)
    const baseline = await guardBaseline(table, previous, context)
    const encoded = await encode(table, named, previous, bytes, { ...context, encodeThread: threads.encode }, held)
    const erasedRows = erased?.()
    holdErasedRows(table, erasedRows, context.acceptChanges)
    const guarded = guard(table, named, baseline, previous, encoded, context)
    const { object, warnings: layoutWarnings } = await commit(table, previous, guarded.schema, encoded, context)
    const archived = await archiveUnlessErased(opened.raw, erasedRows)
    const purged = context.purgeVersions
      ? await purgeVersions(context.store, context.layout, table.name, context.run.exportDate)
      : 0
    // Merged with whatever another run registered meanwhile; the catalog is told the merged schema after it is
    // written, so the date is in place with its registry and run index whatever the catalog answers, and the
    // next run retries a catalog that failed (every run reconciles it with the registry).
    const registered = history
      ? undefined
      : await registerTableSchema(context.store, withLayout(guarded.schema, context.layout), table.columns.drop)
    const cataloged = registered
      ? await catalogWarnings(context.catalog, registered, context.store.root, context.layout.format)
      : []
    const expired = await expire(table, context.store, context.layout, context.run.exportDate)
    const details = read.details()
    const warnings = [
      ...(bytes.warnings ?? []),
      ...details.warnings,
      ...unknownOverrides(table, named.columns),
      ...(history === undefined ? settledAcceptances(table, previous) : []),
      ...(encoded.keys ? keyWarnings(encoded.keys) : []),
      ...layoutWarnings,
      ...archived.warnings,
      ...cataloged,
      ...expired.warnings,
    ]
    return {
      tableId: table.id,
      name: table.name,
      status: 'succeeded',
      ...(bytes.httpStatus === undefined ? {} : { httpStatus: bytes.httpStatus }),
      bytesReceived: bytes.received(),
      sha256: opened.sha256(),
      format: details.format,
      encoding: details.encoding,
      ...(details.delimiter === undefined ? {} : { delimiter: details.delimiter }),
      ...(details.sheet === undefined ? {} : { sheet: details.sheet }),
      rows: encoded.rows,
      columns: [...encoded.plan.schema.columns.map(columnRecord), ...LINEAGE_COLUMNS],
      objects: archived.object ? [object, archived.object] : [object],
      ...(warnings.length > 0 ? { warnings } : {}),
      ...(encoded.keys ? { keys: encoded.keys } : {}),
      ...(expired.dates.length > 0 ? { expiredDates: expired.dates } : {}),
      ...(bytes.erasure ? { erasure: bytes.erasure() } : {}),
      ...(erasedRows ? { erased: erasedRows } : {}),
      ...(context.purgeVersions ? { versionsDeleted: purged } : {}),
      ...(guarded.findings.length > 0 ? { guards: guarded.findings } : {}),
    }
  } finally {
    bytes.cancel()
    await held.release()
  }
}

interface OpenedBody {
  /** The bytes as they arrive, hashed and (when the source asks) archived on their way to the reader. */
  readonly body: AsyncIterable<Buffer>
  /** SHA-256 (hex) of the body; asked once it has been read to its end. */
  readonly sha256: () => string
  readonly raw: RawArchiveWriter | undefined
}

/** Open: the body, with its hash and its raw archive fed as it streams (the archive commits after the data). */
const openBody = async (
  table: TableConfig,
  bytes: TableBytes,
  context: TableExportContext,
  held: Held,
): Promise<OpenedBody> => {
  const hash = createHash('sha256')
  const raw = bytes.archive
    ? held.hold(
        await openRawArchive(context.store, table.name, context.run.exportDate, table.format, context.signal),
        (r) => r.abort().catch(() => undefined),
      )
    : undefined
  const body = tapBytes(bytes.body, async (chunk) => {
    hash.update(chunk)
    await raw?.write(chunk)
  })
  return { body, sha256: () => hash.digest('hex'), raw }
}

interface EncodedTable {
  readonly upload: ParquetUpload
  /** The final write plan, with the key for the changes view. */
  readonly plan: WritePlan
  readonly rows: number
  /** For a table with a key: its empty and repeated keys. */
  readonly keys: KeyReport | undefined
}

/** Encode: every batch is typed, counted by its key and encoded as it streams; the file is uploaded, uncommitted. */
const encode = async (
  table: TableConfig,
  named: NamedTable,
  previous: TableSchema | undefined,
  bytes: TableBytes,
  context: LayoutContext & { readonly encodeThread: boolean },
  held: Held,
): Promise<EncodedTable> => {
  const { exportDate } = context.run
  const upload = held.hold(
    new ParquetUpload(context.store, context.layout.newDataKey(exportDate, context.run.runId), context.signal),
    (u) => u.abort(),
  )
  const spoolPath = held.hold(await newSpoolFile(context.spoolDirectory, SpoolKind.batches), (file) =>
    rm(file, { force: true }),
  )
  const names = named.columns.map((c) => c.name)
  const keys =
    table.key &&
    held.hold(
      openKeyCounter(
        table.id,
        table.key,
        names,
        previous?.columns.map((c) => c.name) ?? [],
        `${spoolPath}${KEYS_SPILL_SUFFIX}`,
      ),
      (counter) => counter.close(),
    )
  // The columns this date publishes as pseudonyms: those hashed now, and those read back as pseudonyms (history).
  const pseudonymized = [...table.columns.pseudonymize, ...(bytes.pseudonyms ?? [])]
  const encoder = held.hold(
    new TableEncoder(
      {
        tableId: table.id,
        table: table.name,
        exportDate,
        columns: named.columns,
        types: named.types,
        previous,
        pseudonymized,
        // A date's own rows, rewritten (history), keep the run and time they were exported at.
        run: bytes.lineage ? { ...context.run, ...bytes.lineage } : context.run,
        spoolPath,
        // The encoder hands each batch's buffers back to the reader once it has them copied.
        recycle: (bytesBuffer, offsets) => named.records.recycle(bytesBuffer, offsets),
        thread: context.encodeThread,
      },
      upload,
    ),
    (e) => e.close(),
  )
  const { records } = named
  let rowsSeen = 0
  for await (const batch of records.batches) {
    // Once the body is in, only this stops a table that overruns export.timeouts.tableSeconds (a spooled workbook).
    context.signal?.throwIfAborted()
    // Name and type, continued: what each column's values fit, learnt before the batch is encoded with it.
    named.types.observe(batch)
    keys?.observe(batch)
    await encoder.push(batch)
    rowsSeen += batch.rowCount
    // Once per batch (about a MB of CSV): the telemetry decides how often to show it.
    context.onProgress?.({ bytes: bytes.received(), rows: rowsSeen })
    await upload.drained()
  }
  const { plan, rows } = await encoder.finish()
  const controls = recordedControls(table, previous, pseudonymized)
  return { upload, plan: withChangeHistory(plan, table, controls), rows, keys: keys?.report() }
}

/** Commit: the data file made the date's, then the date in the dates relation, before the registry and the catalog. */
const commit = async (
  table: TableConfig,
  previous: TableSchema | undefined,
  schema: TableSchema,
  encoded: EncodedTable,
  context: LayoutContext,
): Promise<{ readonly object: PublishedObject; readonly warnings: readonly string[] }> => {
  context.signal?.throwIfAborted()
  // The catalog's documented rules are checked before anything moves: a definition it would refuse leaves the
  // previous date wholly in place (data, registry, run index, catalog).
  const merged = mergeSchemas(previous, schema, table.columns.drop)
  context.catalog?.check(merged)
  const object = await encoded.upload.commit()
  // Every registered column, so an Iceberg schema keeps the ids of those this date's file does not have.
  const columns = [...merged.columns.map(columnRecord), ...LINEAGE_COLUMNS]
  const warnings = await context.layout.publish(context.run.exportDate, { ...object, rows: encoded.rows }, columns)
  await recordExportDate(context.store, table.name, context.run.exportDate, previous?.exportDates)
  return { object, warnings }
}
