/**
 * Optional raw archive: the CSV exactly as received, gzip-compressed, one object per table and export date under
 * `_raw/`, so a date's Parquet can be rebuilt (`npm run reprocess`) without calling the service.
 */
import { pipeline, Readable } from 'node:stream'
import { createGunzip, createGzip } from 'node:zlib'
import { PARTITION_KEY, RAW_FOLDER, type TableFormatName } from '../core/constants.ts'
import type { ObjectUpload, WarehouseStore } from '../publish/store.ts'

/** The body's format is in the name, so a table that switches format keeps each date's archive readable. */
export const rawArchiveKey = (table: string, exportDate: string, format: TableFormatName = 'csv'): string =>
  `${RAW_FOLDER}/${table}/${PARTITION_KEY}=${exportDate}/body.${format}.gz`

export interface RawArchiveWriter {
  write(chunk: Buffer): Promise<void>
  commit(): Promise<{ key: string; bytes: number }>
  abort(): Promise<void>
}

/** Gzips the body into an upload as it streams past; nothing is visible until commit. */
export const openRawArchive = async (
  store: WarehouseStore,
  table: string,
  exportDate: string,
  format: TableFormatName = 'csv',
): Promise<RawArchiveWriter> => {
  const key = rawArchiveKey(table, exportDate, format)
  const upload: ObjectUpload = await store.openUpload(key, 'application/gzip')
  const gzip = createGzip()
  let pending: Promise<void> = Promise.resolve()
  let committed = false
  gzip.on('data', (chunk: Buffer) => {
    gzip.pause()
    pending = pending.then(() => upload.write(chunk)).finally(() => gzip.resume())
  })
  const ended = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve)
    gzip.once('error', reject)
  })
  return {
    write: async (chunk) => {
      if (!gzip.write(chunk)) await new Promise((resolve) => gzip.once('drain', resolve))
    },
    commit: async () => {
      gzip.end()
      await ended
      await pending
      const { bytes } = await upload.commit()
      committed = true
      return { key, bytes }
    },
    abort: async () => {
      if (committed) return
      gzip.destroy()
      await upload.abort()
    },
  }
}

/** The archived body of a table and date, decompressed as it streams, or undefined when there is none. */
export const readRawArchive = async (
  store: WarehouseStore,
  table: string,
  exportDate: string,
  format: TableFormatName = 'csv',
): Promise<Readable | undefined> => {
  const compressed = await store.readObject(rawArchiveKey(table, exportDate, format))
  if (compressed === undefined) return undefined
  const gunzip = createGunzip()
  // A failure on either side (a read error, a corrupt archive) destroys gunzip with it, so the reader gets it.
  pipeline(Readable.from(compressed), gunzip, () => undefined)
  return gunzip
}
