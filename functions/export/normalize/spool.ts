/**
 * Spool for the two-pass export: pass 1 infers types over every value while row groups go to a temporary
 * file; pass 2 reads them back one at a time for encoding with the final types. Memory stays at one row group.
 * A table that fits in one row group never touches the disk.
 *
 * Block layout per row group: each column's cells as UTF-8, back to back (padded to 4 bytes), then each
 * column's cell lengths as Int32 (-1 = NULL). The index of blocks stays in memory; it is one entry per group.
 */
import { randomUUID } from 'node:crypto'
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises'
import path from 'node:path'
import type { RowGroup } from './row-groups.ts'

/** Read access to one column of a row group. */
export interface CellColumn {
  readonly length: number
  text(row: number): string | null
}

export interface SpooledRowGroup {
  readonly firstRow: number
  readonly rowCount: number
  readonly columns: readonly CellColumn[]
}

interface BlockEntry {
  readonly offset: number
  readonly size: number
  readonly firstRow: number
  readonly rowCount: number
  readonly dataBytes: readonly number[]
}

const SCRATCH_BYTES = 4 * 1024 * 1024

class InMemoryColumn implements CellColumn {
  readonly #values: readonly (string | null)[]
  constructor(values: readonly (string | null)[]) {
    this.#values = values
  }
  get length(): number {
    return this.#values.length
  }
  text(row: number): string | null {
    return this.#values[row] ?? null
  }
}

class SpooledColumn implements CellColumn {
  readonly #data: Buffer
  readonly #lengths: Int32Array
  readonly #starts: Float64Array
  constructor(data: Buffer, lengths: Int32Array) {
    this.#data = data
    this.#lengths = lengths
    this.#starts = new Float64Array(lengths.length)
    let start = 0
    for (let i = 0; i < lengths.length; i++) {
      this.#starts[i] = start
      start += Math.max(0, lengths[i]!)
    }
  }
  get length(): number {
    return this.#lengths.length
  }
  text(row: number): string | null {
    const length = this.#lengths[row]!
    if (length < 0) return null
    const start = this.#starts[row]!
    return this.#data.toString('utf8', start, start + length)
  }
}

export class RowGroupSpool {
  readonly #directory: string
  #file: FileHandle | undefined
  #filePath: string | undefined
  #held: RowGroup | undefined
  readonly #blocks: BlockEntry[] = []
  #size = 0
  #scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES)
  #scratchUsed = 0

  constructor(directory: string) {
    this.#directory = directory
  }

  /** Bytes written to disk so far. */
  get bytesOnDisk(): number {
    return this.#size
  }

  async append(group: RowGroup): Promise<void> {
    if (this.#held === undefined && this.#blocks.length === 0) {
      this.#held = group
      return
    }
    if (this.#held !== undefined) {
      const held = this.#held
      this.#held = undefined
      await this.#writeBlock(held)
    }
    await this.#writeBlock(group)
  }

  /** The row groups in order. */
  async *groups(): AsyncGenerator<SpooledRowGroup> {
    if (this.#held !== undefined) {
      const { firstRow, rowCount, columns } = this.#held
      yield { firstRow, rowCount, columns: columns.map((values) => new InMemoryColumn(values)) }
      return
    }
    for (const block of this.#blocks) yield this.#readBlock(await this.#readBytes(block), block)
  }

  async dispose(): Promise<void> {
    this.#held = undefined
    await this.#file?.close().catch(() => undefined)
    this.#file = undefined
    if (this.#filePath) await rm(this.#filePath, { force: true })
  }

  async #writeBlock(group: RowGroup): Promise<void> {
    const file = await this.#open()
    const offset = this.#size
    const dataBytes: number[] = []
    const lengths = group.columns.map(() => new Int32Array(group.rowCount))
    for (let c = 0; c < group.columns.length; c++) {
      const values = group.columns[c]!
      const columnLengths = lengths[c]!
      let columnBytes = 0
      for (let row = 0; row < values.length; row++) {
        const text = values[row]
        if (text === null || text === undefined) {
          columnLengths[row] = -1
          continue
        }
        // Awaits only when the scratch buffer must be flushed: most cells are copied synchronously.
        const fits = text.length * 3 <= this.#scratch.length - this.#scratchUsed
        const written = fits ? this.#copyText(text) : await this.#writeText(file, text)
        columnLengths[row] = written
        columnBytes += written
      }
      dataBytes.push(columnBytes)
    }
    const total = dataBytes.reduce((a, b) => a + b, 0)
    const padding = (4 - (total % 4)) % 4
    if (padding > 0) await this.#writeBytes(file, Buffer.alloc(padding))
    for (const columnLengths of lengths) {
      await this.#writeBytes(
        file,
        Buffer.from(columnLengths.buffer, columnLengths.byteOffset, columnLengths.byteLength),
      )
    }
    await this.#flushScratch(file)
    this.#blocks.push({
      offset,
      size: this.#size - offset,
      firstRow: group.firstRow,
      rowCount: group.rowCount,
      dataBytes,
    })
  }

  #copyText(text: string): number {
    const written = this.#scratch.write(text, this.#scratchUsed, 'utf8')
    this.#scratchUsed += written
    return written
  }

  async #writeText(file: FileHandle, text: string): Promise<number> {
    await this.#flushScratch(file)
    if (text.length * 3 <= this.#scratch.length) return this.#copyText(text)
    const bytes = Buffer.from(text, 'utf8')
    await this.#writeBytes(file, bytes)
    return bytes.length
  }

  async #writeBytes(file: FileHandle, bytes: Buffer): Promise<void> {
    if (bytes.length <= this.#scratch.length - this.#scratchUsed) {
      bytes.copy(this.#scratch, this.#scratchUsed)
      this.#scratchUsed += bytes.length
      return
    }
    await this.#flushScratch(file)
    await this.#writeFully(file, bytes, bytes.length)
  }

  async #flushScratch(file: FileHandle): Promise<void> {
    if (this.#scratchUsed === 0) return
    await this.#writeFully(file, this.#scratch, this.#scratchUsed)
    this.#scratchUsed = 0
  }

  /** write(2) may write less than asked; a short write must not leave a hole in the spool. */
  async #writeFully(file: FileHandle, bytes: Buffer, length: number): Promise<void> {
    let done = 0
    while (done < length) {
      const { bytesWritten } = await file.write(bytes, done, length - done, this.#size)
      done += bytesWritten
      this.#size += bytesWritten
    }
  }

  async #open(): Promise<FileHandle> {
    if (this.#file) return this.#file
    await mkdir(this.#directory, { recursive: true })
    this.#filePath = path.join(this.#directory, `spool-${randomUUID()}.bin`)
    this.#file = await open(this.#filePath, 'w+')
    return this.#file
  }

  async #readBytes(block: BlockEntry): Promise<Buffer> {
    const bytes = Buffer.allocUnsafeSlow(block.size)
    let done = 0
    while (done < block.size) {
      const { bytesRead } = await this.#file!.read(bytes, done, block.size - done, block.offset + done)
      if (bytesRead === 0) throw new Error(`spool file is short: read ${done} of ${block.size} bytes`)
      done += bytesRead
    }
    return bytes
  }

  #readBlock(bytes: Buffer, block: BlockEntry): SpooledRowGroup {
    const total = block.dataBytes.reduce((a, b) => a + b, 0)
    let lengthsOffset = total + ((4 - (total % 4)) % 4)
    let dataOffset = 0
    const columns = block.dataBytes.map((size) => {
      const data = bytes.subarray(dataOffset, dataOffset + size)
      const lengths = new Int32Array(bytes.buffer, bytes.byteOffset + lengthsOffset, block.rowCount)
      dataOffset += size
      lengthsOffset += block.rowCount * 4
      return new SpooledColumn(data, lengths)
    })
    return { firstRow: block.firstRow, rowCount: block.rowCount, columns }
  }
}
