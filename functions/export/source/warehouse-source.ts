/**
 * A date's own Parquet as a table source, for changing history (erasure requests, rewrites): the object an export published
 * is read back row group by row group and handed to the table's path as the CSV it stands for, under the header
 * texts the registry keeps, so naming, typing, encoding and publishing are the export's own. Each typed value is
 * written in a spelling the path reads back as the same value (`cellText`); a value kept in its `<column>__text`
 * companion is handed over as that text. Rows a filter matches are left out, and counted. Rows are read in slices,
 * each column page by page (parquet-text.ts): memory holds a row group's compressed chunks and a page per column.
 */
import { createWriteStream } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { zstdDecompressSync } from 'node:zlib'
import { type AsyncBuffer, type FileMetaData, parquetMetadataAsync, parquetRead } from 'hyparquet'
import type { TableConfig } from '../core/config.ts'
import {
  type ColumnType,
  LineageColumn,
  PARTITION_KEY,
  PSEUDONYMIZED_METADATA_KEY,
  type RunMode,
} from '../core/constants.ts'
import { DataError, InternalError, StateCorruptError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { newSpoolFile, SpoolKind } from '../scratch/spool-files.ts'
import { type CsvReadBack, csvRecords } from './parquet-text.ts'
import type { TableSource } from './table-source.ts'

export { cellText } from './csv-fields.ts'

/** A registry column as this source needs it: its name, the header it came from, its type, its companion. */
export interface HistoryColumn {
  readonly name: string
  /** The header text; a companion (`textOf`) has none. */
  readonly header?: string | undefined
  readonly type: ColumnType
  readonly textOf?: string | undefined
}

/** Rows to leave out: each entry's column must hold a text it matches (the text as `cellText` spells the value). */
export interface RowFilter {
  readonly column: string
  /** Whether a stored cell's text is the value looked for (compared as texts, or by their keyed digests). */
  readonly matches: (text: string) => boolean
}

export interface WarehouseSourceOptions {
  /** What the run records say the dates were written for. */
  readonly mode: typeof RunMode.ERASE | typeof RunMode.REWRITE
  /** The table's registered columns (schema/registry.ts), in registry order. */
  readonly columns: readonly HistoryColumn[]
  /** The columns published as pseudonyms, for an object whose footer does not record them (schema/history.ts). */
  readonly pseudonymized: readonly string[]
  /** Rows matching every entry are left out. @default none: every row is kept */
  readonly filters?: readonly RowFilter[]
  /** The key of the date's current data file (publish/table-layout.ts), undefined when it has none. */
  readonly dataKey: (exportDate: string) => Promise<string | undefined>
  /** Where the object is spooled for random access (the Lambda's /tmp, or the OS temp folder). */
  readonly spoolDirectory: string
}

const csvField = (text: string | undefined): string =>
  text === undefined || text === '' ? '' : `"${text.replace(/"/g, '""')}"`

/** The store's object spooled to a file, read by ranges. */
const spooledParquet = async (
  store: WarehouseStore,
  key: string,
  spoolDirectory: string,
): Promise<{ file: AsyncBuffer; readAt: CsvReadBack['readAt']; close: () => Promise<void> } | undefined> => {
  const body = await store.readObject(key)
  if (body === undefined) return undefined
  const path = await newSpoolFile(spoolDirectory, SpoolKind.batches)
  try {
    await pipeline(body, createWriteStream(path, { flags: 'wx' }))
    const handle = await open(path, 'r')
    const { size } = await handle.stat()
    const file: AsyncBuffer = {
      byteLength: size,
      slice: async (start, end = size) => {
        const bytes = Buffer.allocUnsafe(end - start)
        await handle.read(bytes, 0, bytes.length, start)
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer
      },
    }
    const readAt = async (target: Uint8Array, position: number) => {
      for (let done = 0; done < target.length; ) {
        const { bytesRead } = await handle.read(target, done, target.length - done, position + done)
        if (bytesRead === 0) throw new InternalError({ reason: `${key} ends before byte ${position + target.length}` })
        done += bytesRead
      }
    }
    return { file, readAt, close: () => handle.close().finally(() => rm(path, { force: true })) }
  } catch (error) {
    await rm(path, { force: true })
    throw error
  }
}

const COMPRESSORS = { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) }

export const warehouseSource = (store: WarehouseStore, options: WarehouseSourceOptions): TableSource => ({
  mode: options.mode,
  warnings: [],
  check: async () => ({}),
  open: async (table, { exportDate }) => {
    // Only an Iceberg table's date can have no current file: the message names where its files would be.
    const key = (await options.dataKey(exportDate)) ?? `${table.name}/data/${PARTITION_KEY}=${exportDate}/`
    const spooled = await spooledParquet(store, key, options.spoolDirectory)
    if (spooled === undefined) {
      throw new DataError('DATA_OBJECT_MISSING', {
        tableId: table.id,
        reason: `dt=${exportDate} has no data object ${key}`,
        hint: 'nothing to change for this date; list the dates with npm run query -- "SELECT DISTINCT dt FROM <table>"',
      })
    }
    let metadata: FileMetaData
    try {
      metadata = await parquetMetadataAsync(spooled.file)
    } catch (error) {
      await spooled.close()
      throw new StateCorruptError({
        tableId: table.id,
        where: store.root,
        key,
        reason: `it is not a Parquet file this exporter can read (${(error as Error).message})`,
        hint: 'nothing was changed; on AWS restore the object from an earlier S3 version, locally re-export the date',
      })
    }
    const inFile = new Set(metadata.schema.slice(1).map((element) => element.name))
    const data = options.columns.filter((c) => c.textOf === undefined && c.header !== undefined && inFile.has(c.name))
    const companionOf = new Map(
      options.columns.filter((c) => c.textOf !== undefined && inFile.has(c.name)).map((c) => [c.textOf!, c.name]),
    )
    const filters = (options.filters ?? []).map((f) => ({ index: data.findIndex((c) => c.name === f.column), ...f }))
    const readRows = async (rowStart: number, rowEnd: number, columns: readonly string[]): Promise<unknown[][]> => {
      let rows: unknown[][] = []
      await parquetRead({
        file: spooled.file,
        metadata,
        columns: [...columns],
        rowStart,
        rowEnd,
        rowFormat: 'array',
        compressors: COMPRESSORS,
        onComplete: (done: unknown[][]) => {
          rows = done
        },
      })
      return rows
    }
    // The rows keep the run and the time they were exported at: an erasure exports nothing anew.
    const [first] =
      Number(metadata.num_rows) > 0 ? await readRows(0, 1, [LineageColumn.RUN_ID, LineageColumn.EXPORTED_AT]) : []
    const lineage = first && { runId: String(first[0]), exportedAt: first[1] as Date }
    const recorded = metadata.key_value_metadata?.find((entry) => entry.key === PSEUDONYMIZED_METADATA_KEY)?.value
    const pseudonyms = ((recorded && (JSON.parse(recorded) as string[])) || options.pseudonymized).filter((name) =>
      data.some((c) => c.name === name),
    )
    let removed = 0
    let received = 0
    let cancelled = false
    let closed: Promise<void> | undefined
    const close = () => {
      closed ??= spooled.close().catch(() => undefined)
      return closed
    }

    const { readAt } = spooled
    async function* body(): AsyncGenerator<Buffer> {
      try {
        const header = Buffer.from(`${data.map((c) => csvField(c.header)).join(',')}\n`)
        received += header.length
        yield header
        const records = csvRecords({
          readAt,
          metadata,
          columns: data.map((c) => ({ name: c.name, type: c.type, companion: companionOf.get(c.name) })),
          filters,
          cancelled: () => cancelled,
          onRemoved: () => removed++,
        })
        for await (const chunk of records) {
          received += chunk.length
          yield chunk
        }
      } finally {
        await close()
      }
    }

    return {
      body: body(),
      charset: 'utf-8',
      received: () => received,
      // The path cancels whether or not it read the body: the spool goes either way.
      cancel: () => {
        cancelled = true
        void close()
      },
      archive: false,
      pseudonyms,
      ...(lineage ? { lineage } : {}),
      ...(filters.length > 0
        ? { erasure: () => ({ columns: filters.map((f) => f.column), rowsRemoved: removed }) }
        : {}),
    }
  },
})

/**
 * The table as the path reads this source's CSV: plain UTF-8 with commas, every column already controlled (a
 * pseudonym is not pseudonymized again; a dropped column is no longer registered), nothing archived, kept
 * whatever its retention. Erasure and rewrite start from it.
 */
export const asReadBack = (table: TableConfig): TableConfig => ({
  ...table,
  format: 'csv',
  encoding: 'utf-8',
  invalidBytes: 'fail',
  delimiter: ',',
  shortRows: 'fail',
  archiveRaw: false,
  retention: false,
  sheet: undefined,
  columns: { ...table.columns, drop: [], pseudonymize: [] },
})
