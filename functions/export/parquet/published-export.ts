/**
 * What a published data object says about the export that wrote it, read from its footer alone: its row count
 * (every file has it) and the service's columns with their header text (in objects written since the footer
 * records them, under EXPORT_COLUMNS_METADATA_KEY). A re-export of a date that is not the latest compares with
 * this, as the latest compares with the registry's `latestExport`. Only the object's end is read (on S3 a HEAD
 * and one ranged GET), whatever its size.
 */
import { parquetMetadata } from 'hyparquet'
import { type ColumnType, PSEUDONYMIZED_METADATA_KEY } from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { columnTypeOf } from './encode.ts'

/** Footer key of the service's columns, JSON `[{ name, header }]`: the CSV's columns, not the registry's. */
export const EXPORT_COLUMNS_METADATA_KEY = 'inventory.export_columns'

/** Read first: a footer of about a hundred row groups of 20 columns (2 KB each) fits; a larger one costs a second read. */
const FIRST_TAIL_BYTES = 256 * 1024
/** The footer's length (4 bytes) and the magic number `PAR1` (4 bytes) end every Parquet file. */
const TRAILER_BYTES = 8

export interface PublishedExport {
  readonly rows: number
  /** The object's size. */
  readonly bytes: number
  /** Absent from objects written before the footer recorded them. */
  readonly columns?: readonly { readonly name: string; readonly header: string }[]
  /** The file's own columns (the registry's, companions and lineage included) with their types. */
  readonly fields: readonly { readonly name: string; readonly type: ColumnType | undefined }[]
  /** The columns written as pseudonyms; absent from objects written before the footer recorded them. */
  readonly pseudonymized?: readonly string[]
}

/**
 * The export published at `key`, or undefined when there is no object there, or none that can be read: an object
 * whose footer is broken is no baseline (Athena cannot read it either), and the re-export that replaces it heals
 * the date.
 */
export const readPublishedExport = async (store: WarehouseStore, key: string): Promise<PublishedExport | undefined> => {
  const first = await store.readTail(key, FIRST_TAIL_BYTES)
  if (first === undefined || first.tail.length < TRAILER_BYTES) return undefined
  const needed = first.tail.readUInt32LE(first.tail.length - TRAILER_BYTES) + TRAILER_BYTES
  if (needed > first.size) return undefined
  const tail = needed <= first.tail.length ? first.tail : (await store.readTail(key, needed))?.tail
  return tail === undefined ? undefined : footerExport(tail, first.size)
}

const footerExport = (tail: Buffer, bytes: number): PublishedExport | undefined => {
  try {
    const metadata = parquetMetadata(tail)
    const value = (key: string) => metadata.key_value_metadata?.find((entry) => entry.key === key)?.value
    const columns = value(EXPORT_COLUMNS_METADATA_KEY)
    const pseudonymized = value(PSEUDONYMIZED_METADATA_KEY)
    return {
      rows: Number(metadata.num_rows),
      bytes,
      ...(columns === undefined ? {} : { columns: JSON.parse(columns) as PublishedExport['columns'] }),
      fields: metadata.schema.slice(1).map((element) => ({ name: element.name, type: columnTypeOf(element) })),
      ...(pseudonymized === undefined ? {} : { pseudonymized: JSON.parse(pseudonymized) as string[] }),
    }
  } catch {
    return undefined
  }
}
