/**
 * The raw archive as a table source (reprocess): the body an earlier export kept under `_raw/`, decompressed as it
 * streams, read through the warehouse store (a folder locally, S3 on AWS). The service is never called.
 */
import { createHash } from 'node:crypto'
import { RunMode } from '../core/constants.ts'
import { DataError, StateCorruptError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { archiveDigests, type RecordedDigest } from './archive-digest.ts'
import { rawArchiveKey, readRawArchive } from './raw-archive.ts'
import type { TableSource } from './table-source.ts'

export const archiveSource = (store: WarehouseStore): TableSource => {
  const recordedDigest = archiveDigests(store)
  return {
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
      const recorded = await recordedDigest(key, exportDate)
      const verify = { store: store.root, key, tableId: table.id, recorded }
      let received = 0
      const counted = async function* () {
        for await (const chunk of verified(failingAsCorrupt(body, table.id, key), verify)) {
          received += chunk.length
          yield chunk
        }
      }
      // Destroying the gunzip side destroys the read under it (they are one pipeline): the file or S3 stream closes.
      return {
        body: counted(),
        // Read again as the export read it: the charset its answer declared is kept only in its run record.
        charset: recorded?.encoding,
        received: () => received,
        cancel: () => body.destroy(),
        archive: false,
        ...(recorded === undefined
          ? { warnings: [`no run record of ${exportDate} holds the SHA-256 of ${key}: it was rebuilt unverified`] }
          : {}),
      }
    },
  }
}

/**
 * The archive's bytes, hashed as they pass; at the end, a body other than the one the archiving run recorded fails
 * as STATE_CORRUPT. The check comes after the last byte but before the parse can finish, so nothing is published
 * from it.
 */
async function* verified(
  body: AsyncIterable<Buffer>,
  { store, key, tableId, recorded }: { store: string; key: string; tableId: string; recorded?: RecordedDigest },
): AsyncGenerator<Buffer> {
  if (recorded === undefined) return yield* body
  const hash = createHash('sha256')
  for await (const chunk of body) {
    hash.update(chunk)
    yield chunk
  }
  const actual = hash.digest('hex')
  if (actual === recorded.sha256) return
  throw new StateCorruptError({
    tableId,
    where: store,
    key,
    reason: `its content's SHA-256 is ${actual.slice(0, 12)}…, not the ${recorded.sha256.slice(0, 12)}… run ${recorded.runId} recorded when it archived the date (another body was put in its place)`,
    hint: `nothing was published from it and the date's data is kept; on AWS restore ${key} from the S3 version run ${recorded.runId} wrote (aws s3api list-object-versions), locally put that run's archive back, then run reprocess again`,
  })
}

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
