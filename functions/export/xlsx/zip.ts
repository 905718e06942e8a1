/**
 * The workbook's zip, read with yauzl from the spooled file: the central directory once, then one entry at a time
 * as a stream. An incomplete zip (no end-of-directory record, an entry running past the end) is a download cut
 * short; an entry whose declared size is out of proportion to its compressed size is refused before it is inflated
 * (a zip bomb), and yauzl checks that no entry inflates past its declared size.
 */
import type { Readable } from 'node:stream'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { ProtocolError, WorkbookError } from '../core/errors.ts'

/** Largest inflated/compressed ratio of an entry (Apache POI's default); XML of real sheets stays near 10. */
const MAX_COMPRESSION_RATIO = 100
/** Entries smaller than this are never refused for their ratio: a tiny entry may compress very well. */
const RATIO_FLOOR_BYTES = 1024 * 1024
/** A workbook has a few dozen parts; a directory with more than this is not one. */
export const MAX_ZIP_ENTRIES = 10_000

export interface ZipArchive {
  /** Names of the entries, as stored. */
  readonly names: ReadonlySet<string>
  /** The inflated bytes of an entry. */
  open(name: string): Promise<Readable>
  close(): void
}

/** yauzl's messages for a zip whose end is missing or whose entries run past the end of the file. */
const INCOMPLETE = /end of central directory record signature not found|past the end of|unexpected EOF|truncated/i

export const openZip = async (file: string, tableId: string): Promise<ZipArchive> => {
  let zip: ZipFile
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, strictFileNames: false })
  } catch (error) {
    throw zipError(error, tableId)
  }
  const entries = new Map<string, Entry>()
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        entries.set(entry.fileName, entry)
        if (entries.size > MAX_ZIP_ENTRIES) {
          reject(
            new WorkbookError('XLSX_MALFORMED', {
              tableId,
              reason: `the workbook has more than ${MAX_ZIP_ENTRIES} zip entries`,
            }),
          )
          return
        }
        zip.readEntry()
      })
      zip.once('end', resolve)
      zip.once('error', reject)
      zip.readEntry()
    })
  } catch (error) {
    zip.close()
    throw zipError(error, tableId)
  }
  return {
    names: new Set(entries.keys()),
    open: async (name) => {
      const entry = entries.get(name)
      if (entry === undefined)
        throw new WorkbookError('XLSX_MALFORMED', { tableId, reason: `the workbook has no ${name}` })
      checkRatio(entry, tableId)
      try {
        const stream = await zip.openReadStreamPromise(entry)
        return stream
      } catch (error) {
        throw zipError(error, tableId)
      }
    },
    close: () => zip.close(),
  }
}

const checkRatio = (entry: Entry, tableId: string): void => {
  if (entry.isEncrypted()) {
    throw new WorkbookError('XLSX_ENCRYPTED', { tableId, reason: `the workbook's ${entry.fileName} is encrypted` })
  }
  const { uncompressedSize: inflated, compressedSize: compressed } = entry
  if (inflated > RATIO_FLOOR_BYTES && inflated > compressed * MAX_COMPRESSION_RATIO) {
    throw new WorkbookError('XLSX_TOO_LARGE', {
      tableId,
      reason: `the workbook's ${entry.fileName} would inflate from ${compressed} to ${inflated} bytes, more than ${MAX_COMPRESSION_RATIO} times (a zip bomb?)`,
    })
  }
}

/** A coded error for yauzl's failures while reading the zip's structure or an entry. */
export const zipError = (error: unknown, tableId: string): Error => {
  if (error instanceof WorkbookError || error instanceof ProtocolError) return error
  const message = error instanceof Error ? error.message : String(error)
  if (INCOMPLETE.test(message)) {
    return new ProtocolError('BODY_TRUNCATED', {
      tableId,
      reason: `the workbook is incomplete, as if the download was cut short (${message})`,
    })
  }
  return new WorkbookError('XLSX_MALFORMED', {
    tableId,
    reason: `the workbook is not a readable zip (${message})`,
    cause: error,
  })
}
