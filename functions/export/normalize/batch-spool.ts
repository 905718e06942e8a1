/**
 * Spool for the rare second pass: record batches written to a temporary file exactly as they travel (a small
 * header, the cell offsets, the cell bytes), read back in order only when a batch changed the write plan after
 * earlier ones were encoded. Synchronous I/O: a batch is a MiB or so, and the page cache takes it at once.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs'
import { InternalError } from '../core/errors.ts'
import type { RecordBatch } from './record-batch.ts'

/** First row and byte length as doubles, row and column counts as 32-bit integers. */
const HEADER_BYTES = 24

export class BatchSpool {
  readonly #path: string
  #fd: number | undefined
  #size = 0
  #batches = 0

  constructor(path: string) {
    this.#path = path
  }

  /** Bytes written so far. */
  get bytesOnDisk(): number {
    return this.#size
  }

  append(batch: RecordBatch): void {
    this.#fd ??= openSync(this.#path, 'w+')
    const header = new DataView(new ArrayBuffer(HEADER_BYTES))
    header.setFloat64(0, batch.firstRow, true)
    header.setInt32(8, batch.rowCount, true)
    header.setInt32(12, batch.columnCount, true)
    header.setFloat64(16, batch.bytes.length, true)
    this.#write(new Uint8Array(header.buffer))
    this.#write(new Uint8Array(batch.offsets.buffer, batch.offsets.byteOffset, batch.offsets.byteLength))
    this.#write(batch.bytes)
    this.#batches++
  }

  /** The batches in the order they were appended. */
  *batches(): Generator<RecordBatch> {
    let position = 0
    for (let i = 0; i < this.#batches; i++) {
      const header = new DataView(this.#read(position, HEADER_BYTES).buffer)
      const firstRow = header.getFloat64(0, true)
      const rowCount = header.getInt32(8, true)
      const columnCount = header.getInt32(12, true)
      const byteLength = header.getFloat64(16, true)
      position += HEADER_BYTES
      const offsets = new Int32Array(this.#read(position, (rowCount * columnCount + 1) * 4).buffer)
      position += offsets.byteLength
      const bytes = this.#read(position, byteLength)
      position += byteLength
      yield { firstRow, rowCount, columnCount, bytes, offsets }
    }
  }

  /** Closes the file; its owner deletes it. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }

  /** write(2) may write less than asked; a short write must not leave a hole in the spool. */
  #write(bytes: Uint8Array): void {
    let done = 0
    while (done < bytes.length) {
      done += writeSync(this.#fd!, bytes, done, bytes.length - done, this.#size + done)
    }
    this.#size += bytes.length
  }

  #read(position: number, length: number): Uint8Array {
    const bytes = new Uint8Array(length)
    let done = 0
    while (done < length) {
      const read = readSync(this.#fd!, bytes, done, length - done, position + done)
      if (read === 0) {
        throw new InternalError({ reason: `spool file ${this.#path} is short: read ${done} of ${length} bytes` })
      }
      done += read
    }
    return bytes
  }
}
