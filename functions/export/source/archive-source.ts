/**
 * The raw archive as a table source (reprocess): the body an earlier export kept under `_raw/`, decompressed as it
 * streams, read through the warehouse store (a folder locally, S3 on AWS). The service is never called.
 */
import { RunMode } from '../core/constants.ts'
import { DataError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { rawArchiveKey, readRawArchive } from './raw-archive.ts'
import type { TableSource } from './table-source.ts'

export const archiveSource = (store: WarehouseStore): TableSource => ({
  mode: RunMode.REPROCESS,
  warnings: [],
  check: async () => ({}),
  open: async (table, { exportDate }) => {
    const key = rawArchiveKey(table.name, exportDate, table.format)
    const body = await readRawArchive(store, table.name, exportDate, table.format)
    if (body === undefined) {
      throw new DataError('RAW_ARCHIVE_MISSING', {
        tableId: table.id,
        reason: `there is no raw archive ${key} to rebuild from`,
        hint: 'set "archiveRaw": true on the table so future exports keep their CSV or workbook',
      })
    }
    let received = 0
    const counted = async function* () {
      for await (const chunk of failingAsCorrupt(body, table.id, key)) {
        received += chunk.length
        yield chunk
      }
    }
    // Destroying the gunzip side destroys the read under it (they are one pipeline): the file or S3 stream closes.
    return { body: counted(), received: () => received, cancel: () => body.destroy(), archive: false }
  },
})

/** zlib's failures (codes `Z_*`) mean the archive itself is damaged: say so, and what to do, as a coded error. */
async function* failingAsCorrupt(body: AsyncIterable<Buffer>, tableId: string, key: string): AsyncGenerator<Buffer> {
  try {
    yield* body
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code !== 'string' || !code.startsWith('Z_')) throw error
    throw new DataError('RAW_ARCHIVE_CORRUPT', {
      tableId,
      reason: `the raw archive ${key} is damaged (${(error as Error).message})`,
      hint: 'the data for the date is kept as it was; restore the archive (e.g. from S3 versioning) and run reprocess again',
      cause: error,
    })
  }
}
