/**
 * Optional raw archive: the CSV exactly as received, gzip-compressed, one object per table and export date under
 * `_raw/`, so a date's Parquet can be rebuilt (`npm run reprocess`) without calling the service.
 */
import { pipeline, Readable } from 'node:stream'
import { createGunzip, createGzip } from 'node:zlib'
import { PARTITION_KEY, RAW_FOLDER, type TableFormatName } from '../core/constants.ts'
import { PublishError } from '../core/errors.ts'
import type { ObjectUpload, WarehouseStore } from '../publish/store.ts'

/** The body's format is in the name, so a table that switches format keeps each date's archive readable. */
export const rawArchiveKey = (table: string, exportDate: string, format: TableFormatName = 'csv'): string =>
  `${RAW_FOLDER}/${table}/${PARTITION_KEY}=${exportDate}/body.${format}.gz`

export interface RawArchiveWriter {
  write(chunk: Buffer): Promise<void>
  commit(): Promise<{ key: string; bytes: number }>
  abort(): Promise<void>
}

/**
 * Gzips the body into an upload as it streams past; nothing is visible until commit. Every promise here has an
 * owner: the first failure (of gzip or of the upload) is kept and rethrown by the next write or by commit, so an
 * upload that fails while the table is already failing elsewhere never becomes an unhandled rejection. When
 * `signal` fires the upload is aborted at once, which also frees a write waiting on the store's backpressure.
 */
export const openRawArchive = async (
  store: WarehouseStore,
  table: string,
  exportDate: string,
  format: TableFormatName = 'csv',
  signal?: AbortSignal,
): Promise<RawArchiveWriter> => {
  const key = rawArchiveKey(table, exportDate, format)
  const upload: ObjectUpload = await store.openUpload(key, 'application/gzip')
  const gzip = createGzip()
  let failure: unknown
  let pending: Promise<void> = Promise.resolve()
  let committed = false
  let aborting: Promise<void> | undefined
  const fail = (error: unknown) => {
    failure ??= error
  }
  gzip.on('data', (chunk: Buffer) => {
    gzip.pause()
    pending = pending
      .then(() => (failure === undefined ? upload.write(chunk) : undefined))
      .catch(fail)
      .finally(() => gzip.resume())
  })
  gzip.on('error', fail)
  const ended = new Promise<void>((resolve) => {
    gzip.once('end', resolve)
    // Destroyed (aborted) or failed: there is no end to wait for.
    gzip.once('close', resolve)
  })
  const abort = (): Promise<void> => {
    if (committed) return Promise.resolve()
    aborting ??= (async () => {
      fail(new PublishError({ target: key, reason: 'the raw archive was aborted; nothing of it was published' }))
      signal?.removeEventListener('abort', onAbort)
      gzip.destroy()
      // The store's abort frees a write waiting on its backpressure; the queue then settles (as a failure).
      await upload.abort()
      await pending
    })()
    return aborting
  }
  const onAbort = () => void abort().catch(fail)
  signal?.addEventListener('abort', onAbort, { once: true })
  return {
    write: async (chunk) => {
      if (failure !== undefined) throw failure
      if (gzip.write(chunk)) return
      await new Promise<void>((resolve) => {
        const done = () => {
          gzip.off('drain', done)
          gzip.off('close', done)
          resolve()
        }
        gzip.on('drain', done)
        gzip.on('close', done)
      })
      if (failure !== undefined) throw failure
    },
    commit: async () => {
      if (failure !== undefined) throw failure
      gzip.end()
      await ended
      await pending
      if (failure !== undefined) throw failure
      const { bytes } = await upload.commit()
      committed = true
      signal?.removeEventListener('abort', onAbort)
      return { key, bytes }
    },
    abort,
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
