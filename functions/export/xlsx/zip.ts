/**
 * The workbook's zip, read with yauzl from the spooled file: the central directory once, then one entry at a time
 * as a stream. An incomplete zip (no end-of-directory record, an entry running past the end) is a download cut
 * short; an entry whose declared size is out of proportion to its compressed size is refused before it is inflated
 * (a zip bomb), and yauzl checks that no entry inflates past its declared size.
 */
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream'
import { createInflateRaw } from 'node:zlib'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { ProtocolError, WorkbookError } from '../core/errors.ts'

/** Largest inflated/compressed ratio of an entry (Apache POI's default); XML of real sheets stays near 10. */
const MAX_COMPRESSION_RATIO = 100
/** Entries smaller than this are never refused for their ratio: a tiny entry may compress very well. */
const RATIO_FLOOR_BYTES = 1024 * 1024
/** A workbook has a few dozen parts; a directory with more than this is not one. */
export const MAX_ZIP_ENTRIES = 10_000
/**
 * Inflated bytes per zlib round trip. yauzl's inflate stream uses zlib's 16 KiB: about 12,600 trips through
 * libuv's pool for the bench's 202 MB worksheet, each a callback, a Buffer and a stream hop on the reading thread.
 */
export const INFLATE_CHUNK_BYTES = 256 * 1024
/** Inflated chunks buffered ahead of the scanner, so the pool inflates the next ones while a chunk is scanned. */
const INFLATE_AHEAD_CHUNKS = 4

export interface ZipArchive {
  /** Names of the entries, as stored. */
  readonly names: ReadonlySet<string>
  /** An entry's inflated size, as the directory declares it (and as its reading holds it to). */
  inflatedSize(name: string): number | undefined
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
    inflatedSize: (name) => entries.get(name)?.uncompressedSize,
    open: async (name) => {
      const entry = entries.get(name)
      if (entry === undefined)
        throw new WorkbookError('XLSX_MALFORMED', { tableId, reason: `the workbook has no ${name}` })
      checkRatio(entry, tableId)
      try {
        if (entry.compressionMethod !== DEFLATED) return await zip.openReadStreamPromise(entry)
        return inflate(
          await zip.openReadStreamPromise(entry, { decodeFileData: false }),
          entry.uncompressedSize,
          tableId,
        )
      } catch (error) {
        throw zipError(error, tableId)
      }
    },
    close: () => zip.close(),
  }
}

/** The zip method for deflated entries; the only one besides stored (0) that yauzl reads. */
const DEFLATED = 8

/**
 * The entry's deflated bytes, as yauzl reads them within the entry's bounds, inflated in INFLATE_CHUNK_BYTES
 * chunks, and refused as yauzl refuses them: more bytes than the directory declares fail as soon as they inflate
 * (the bound on a zip bomb), fewer fail at the end.
 */
const inflate = (deflated: Readable, declared: number, tableId: string): Readable => {
  const inflated = new DeclaredSize(declared, tableId)
  pipeline(
    deflated,
    createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES }),
    inflated,
    // The last stream carries any failure to its reader; pipeline only needs a callback to destroy them all.
    () => undefined,
  )
  return inflated
}

/** Passes bytes on while their count stays within `declared`, and fails at the end unless it reached it. */
class DeclaredSize extends Transform {
  readonly #declared: number
  readonly #tableId: string
  #count = 0

  constructor(declared: number, tableId: string) {
    // Chunks are handed on one by one as objects: a byte stream's read() would join all it has buffered into one
    // Buffer, copying every inflated byte once more.
    super({ readableObjectMode: true, readableHighWaterMark: INFLATE_AHEAD_CHUNKS })
    this.#declared = declared
    this.#tableId = tableId
  }

  /** The error zipError() makes of yauzl's own failure with this message. */
  #unreadable(message: string): WorkbookError {
    return new WorkbookError('XLSX_MALFORMED', {
      tableId: this.#tableId,
      reason: `the workbook is not a readable zip (${message})`,
    })
  }

  override _transform(chunk: Buffer, _: BufferEncoding, callback: TransformCallback): void {
    this.#count += chunk.length
    if (this.#count > this.#declared) {
      callback(
        this.#unreadable(`too many bytes in the stream. expected ${this.#declared}. got at least ${this.#count}`),
      )
    } else callback(null, chunk)
  }

  override _flush(callback: TransformCallback): void {
    if (this.#count < this.#declared) {
      callback(this.#unreadable(`not enough bytes in the stream. expected ${this.#declared}. got only ${this.#count}`))
    } else callback()
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
