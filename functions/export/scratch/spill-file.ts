/**
 * A file on the spool disk, written through a 1 MiB buffer, then read back, and removed on close: where a stage
 * puts what would otherwise grow in memory with the table (a workbook's shared strings, a snapshot's key hashes).
 * Synchronous on purpose: the callers work inside synchronous loops over cells and rows, the spool is a local
 * disk (the Lambda's /tmp), and the reads come from the page cache.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { InternalError } from '../core/errors.ts'

export class SpillFile {
  readonly descriptor: number
  readonly #path: string
  /** Dropped once the file is written whole (`seal`): two spill files would otherwise hold 2 MiB for the read. */
  #buffer: Buffer | undefined = Buffer.allocUnsafe(1024 * 1024)
  #buffered = 0
  #size = 0
  #closed = false

  constructor(path: string) {
    this.#path = path
    this.descriptor = openSync(path, 'wx+')
  }

  /** Bytes appended so far. */
  get size(): number {
    return this.#size
  }

  append(bytes: Uint8Array): void {
    const buffer = this.#writable()
    this.#size += bytes.length
    if (this.#buffered + bytes.length > buffer.length) this.flush()
    if (bytes.length > buffer.length) {
      writeAll(this.descriptor, bytes)
      return
    }
    buffer.set(bytes, this.#buffered)
    this.#buffered += bytes.length
  }

  flush(): void {
    if (this.#buffer) writeAll(this.descriptor, this.#buffer.subarray(0, this.#buffered))
    this.#buffered = 0
  }

  /** Writes what is buffered and frees the buffer: the file is read from now on, never appended to. */
  seal(): void {
    this.flush()
    this.#buffer = undefined
  }

  /** The whole file from its start, in blocks of `blockBytes` (the last one shorter), into one reused buffer. */
  *blocks(blockBytes: number): Generator<Buffer> {
    this.flush()
    const block = Buffer.allocUnsafe(blockBytes)
    for (let at = 0; at < this.#size; ) {
      let filled = 0
      while (filled < blockBytes && at + filled < this.#size) {
        const read = readSync(this.descriptor, block, filled, blockBytes - filled, at + filled)
        if (read === 0)
          throw new InternalError({ reason: `a spill file ended at ${at + filled} of ${this.#size} bytes` })
        filled += read
      }
      at += filled
      yield block.subarray(0, filled)
    }
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    closeSync(this.descriptor)
    rmSync(this.#path, { force: true })
  }

  #writable(): Buffer {
    if (this.#buffer === undefined) throw new InternalError({ reason: 'a sealed spill file was appended to' })
    return this.#buffer
  }
}

export const writeAll = (descriptor: number, bytes: Uint8Array): void => {
  for (let at = 0; at < bytes.length; ) at += writeSync(descriptor, bytes, at)
}
