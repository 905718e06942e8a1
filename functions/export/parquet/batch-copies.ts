/**
 * The copies of a row group's batches, column by column, in two buffers reused from one group to the next. A group
 * outlives the parser's buffers (they go back for reuse at once), so its batches are copied; copies made fresh for
 * every batch live long enough to reach V8's old generation, where they wait for a full collection, and tens of MiB
 * of dead copies then sat in memory at times. Here the group's copies are views on one byte buffer and one offsets
 * buffer, which only grow (to the largest group seen) and are rewritten by the next group.
 *
 * Each batch is copied as one batch per column (`columnCount` 1): a column chunk is made by reading one column
 * over the whole group, and in the parser's row-major layout that read touched a new cache line for nearly every
 * cell of a group far larger than the caches. CPU profiles of the export put most of the time making string values
 * and parsing dates and doubles on the first read of each cell. Column by column, the same read is sequential.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import type { RecordBatch } from '../normalize/record-batch.ts'

/** First capacity of each buffer; it doubles (at least) when a group needs more. */
const INITIAL_BYTES = 1024 * 1024

/**
 * Bytes of copies (cells and offsets) a group keeps in memory before the rest of its batches go to the spill file.
 * Row groups of DuckDB's 122,880 rows held in memory raised the export's peak RSS to 254 MiB on 64 MB tables of
 * 12 columns (bench/shapes.ts), against the 256 MiB bound; from the spill file a column is read back only when its
 * chunk is written, so memory holds one column of the group, not all of them. 2 MiB rather than 8 (with 8 the
 * 300,000-row workbook export peaked at 250 MiB, with 2 at 225 and 241), and 1 MiB for each of the two sets a
 * table encoder keeps since a group is written while the next fills (table-encoder.ts): 2 MiB together.
 */
export const IN_MEMORY_BYTES = 1024 * 1024

/** One batch's column in the spill file: where its cells and its offsets are. */
interface SpilledColumn {
  readonly firstRow: number
  readonly rowCount: number
  readonly bytesAt: number
  readonly byteLength: number
  readonly offsetsAt: number
}

/** Cells up to this length are copied by a JS loop, which beats a native call for short ones. */
const SHORT_CELL = 32

/**
 * The buffers a spilled column is read back into, reused by every column and group. One group is written at a
 * time, so the two sets of copies a table encoder keeps (the group being written, the next) share one.
 */
export class SpillReadBuffers {
  bytes = new Uint8Array(0)
  offsets = new Int32Array(0)

  /** A table's, or the buffers of a table that closed, grown already. */
  static take(): SpillReadBuffers {
    return spareReads.pop() ?? new SpillReadBuffers()
  }

  /** Nothing reads into these any more: the next table's. */
  give(): void {
    if (spareReads.length < MAX_SPARES) spareReads.push(this)
  }
}

/**
 * Buffers of the tables that closed, for the next on this thread: made anew for each table, the 30 dates of a
 * rewrite left each date's (a dozen MiB, grown to the groups) to the collector, and the allocator kept their pages.
 */
const MAX_SPARES = 2
const spareReads: SpillReadBuffers[] = []
const spareCopies: { bytes: Uint8Array; offsets: Int32Array; fingerprints: BigInt64Array }[] = []

export class BatchCopies {
  readonly #spillPath: string | undefined
  readonly #inMemoryBytes: number
  #spill: number | undefined
  /** Where the group's next spilled bytes go in the file (a group overwrites the one before). */
  #spillAt = 0
  /** Per column, its pieces of the group: copies in memory, or where in the spill file they are. */
  #pieces: (RecordBatch | SpilledColumn)[][] = []
  readonly #read: SpillReadBuffers
  #bytes: Uint8Array
  #offsets: Int32Array
  #fingerprints: BigInt64Array
  #bytesUsed = 0
  #offsetsUsed = 0
  #closed = false
  /** Per column of the batch being copied: where its bytes start, and where its next cell goes. Reused. */
  #starts = new Int32Array(0)
  #cursor = new Int32Array(0)

  /**
   * Without `spillPath` every copy stays in memory. With it, past `inMemoryBytes` of a group's copies the
   * further batches go to that file, created when first needed and deleted by `close()`.
   */
  constructor(spillPath?: string, inMemoryBytes = IN_MEMORY_BYTES, read = new SpillReadBuffers()) {
    this.#spillPath = spillPath
    this.#inMemoryBytes = inMemoryBytes
    this.#read = read
    const spare = spareCopies.pop()
    this.#bytes = spare?.bytes ?? new Uint8Array(INITIAL_BYTES)
    this.#offsets = spare?.offsets ?? new Int32Array(INITIAL_BYTES / 4)
    this.#fingerprints = spare?.fingerprints ?? new BigInt64Array(0)
  }

  /** Bytes the buffers hold, whatever part of them is in use. */
  get capacityBytes(): number {
    return (
      this.#bytes.byteLength +
      this.#offsets.byteLength +
      this.#fingerprints.byteLength +
      this.#read.bytes.byteLength +
      this.#read.offsets.byteLength
    )
  }

  /** Copies `batch` into the group: its columns are then read with `column()` until the next `release()`. */
  add(batch: RecordBatch): void {
    const spill =
      this.#spillPath !== undefined &&
      this.#bytesUsed + 4 * this.#offsetsUsed + batch.bytes.length > this.#inMemoryBytes
    const bytesUsed = this.#bytesUsed
    const offsetsUsed = this.#offsetsUsed
    const columns = this.copy(batch)
    columns.forEach((column, c) => {
      this.#pieces[c] ??= []
      if (!spill) {
        this.#pieces[c]!.push(column)
        return
      }
      this.#spill ??= openSync(this.#spillPath!, 'w+')
      this.#spillAt += writeSync(this.#spill, column.bytes, 0, column.bytes.byteLength, this.#spillAt)
      const bytesAt = this.#spillAt - column.bytes.byteLength
      const offsets = new Uint8Array(column.offsets.buffer, column.offsets.byteOffset, column.offsets.byteLength)
      this.#spillAt += writeSync(this.#spill, offsets, 0, offsets.byteLength, this.#spillAt)
      this.#pieces[c]!.push({
        firstRow: column.firstRow,
        rowCount: column.rowCount,
        bytesAt,
        byteLength: column.bytes.byteLength,
        offsetsAt: bytesAt + column.bytes.byteLength,
      })
    })
    // A spilled batch's room in memory is the next batch's.
    if (spill) {
      this.#bytesUsed = bytesUsed
      this.#offsetsUsed = offsetsUsed
    }
  }

  /**
   * Column `c` over the group, as one single-column batch per batch added; those read back from the spill file
   * are valid until the next call.
   */
  column(c: number): RecordBatch[] {
    const pieces = this.#pieces[c] ?? []
    let bytes = 0
    let offsets = 0
    for (const piece of pieces) {
      if ('bytesAt' in piece) {
        bytes += piece.byteLength
        offsets += piece.rowCount + 1
      }
    }
    const read = this.#read
    if (bytes > read.bytes.length) read.bytes = new Uint8Array(Math.ceil(bytes * 1.25))
    if (offsets > read.offsets.length) read.offsets = new Int32Array(Math.ceil(offsets * 1.25))
    let byteAt = 0
    let offsetAt = 0
    return pieces.map((piece) => {
      if (!('bytesAt' in piece)) return piece
      const cells = read.bytes.subarray(byteAt, byteAt + piece.byteLength)
      const ends = read.offsets.subarray(offsetAt, offsetAt + piece.rowCount + 1)
      readSync(this.#spill!, cells, 0, cells.byteLength, piece.bytesAt)
      readSync(
        this.#spill!,
        new Uint8Array(ends.buffer, ends.byteOffset, ends.byteLength),
        0,
        ends.byteLength,
        piece.offsetsAt,
      )
      byteAt += piece.byteLength
      offsetAt += piece.rowCount + 1
      return { firstRow: piece.firstRow, rowCount: piece.rowCount, columnCount: 1, bytes: cells, offsets: ends }
    })
  }

  /** Closes and deletes the spill file, if there is one; the buffers go to the next table's copies. */
  close(): void {
    if (!this.#closed) {
      this.#closed = true
      this.release()
      if (spareCopies.length < MAX_SPARES) {
        spareCopies.push({ bytes: this.#bytes, offsets: this.#offsets, fingerprints: this.#fingerprints })
      }
    }
    if (this.#spill === undefined) return
    closeSync(this.#spill)
    this.#spill = undefined
    rmSync(this.#spillPath!, { force: true })
  }

  /**
   * A copy of `batch` as one single-column batch per column, in column order, that stays as it is until the next
   * `release()`: column `c` of row `r` is cell `r` of the `c`th.
   */
  copy(batch: RecordBatch): RecordBatch[] {
    const { bytes, offsets, rowCount, columnCount, firstRow } = batch
    const base = offsets[0]!
    const length = offsets[rowCount * columnCount]! - base
    const offsetCount = columnCount * (rowCount + 1)
    // A buffer too small is replaced, not extended: the copies already made keep their views on the old one.
    if (this.#bytesUsed + length > this.#bytes.length) {
      this.#bytes = new Uint8Array(Math.max(this.#bytes.length * 2, length))
      this.#bytesUsed = 0
    }
    if (this.#offsetsUsed + offsetCount > this.#offsets.length) {
      this.#offsets = new Int32Array(Math.max(this.#offsets.length * 2, offsetCount))
      this.#offsetsUsed = 0
    }
    if (this.#cursor.length < columnCount) {
      this.#cursor = new Int32Array(columnCount)
      this.#starts = new Int32Array(columnCount)
    }
    const cursor = this.#cursor
    const starts = this.#starts
    // Each column's bytes start where the columns before it end.
    cursor.fill(0, 0, columnCount)
    for (let r = 0, cell = 0; r < rowCount; r++) {
      for (let c = 0; c < columnCount; c++, cell++) cursor[c]! += offsets[cell + 1]! - offsets[cell]!
    }
    for (let c = 0, at = this.#bytesUsed; c < columnCount; c++) {
      const size = cursor[c]!
      starts[c] = at
      cursor[c] = at
      at += size
    }
    const out = this.#bytes
    // Short cells are copied four bytes at a time through DataViews, then their last bytes one by one (never past
    // the cell: the bytes after it may be another column's, already copied), in a quarter of the steps of a byte loop.
    const outWords = new DataView(out.buffer, out.byteOffset, out.byteLength)
    const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const outOffsets = this.#offsets
    const offsetsAt = this.#offsetsUsed
    const stride = rowCount + 1
    for (let r = 0, cell = 0; r < rowCount; r++) {
      for (let c = 0; c < columnCount; c++, cell++) {
        const start = offsets[cell]!
        const end = offsets[cell + 1]!
        let at = cursor[c]!
        outOffsets[offsetsAt + c * stride + r] = at - starts[c]!
        if (end - start > SHORT_CELL) {
          out.set(bytes.subarray(start, end), at)
          at += end - start
        } else {
          let i = start
          for (; i + 4 <= end; i += 4, at += 4) outWords.setInt32(at, words.getInt32(i, true), true)
          for (; i < end; i++) out[at++] = bytes[i]!
        }
        cursor[c] = at
      }
    }
    const columns: RecordBatch[] = []
    for (let c = 0; c < columnCount; c++) {
      const from = offsetsAt + c * stride
      outOffsets[from + rowCount] = cursor[c]! - starts[c]!
      columns.push({
        firstRow,
        rowCount,
        columnCount: 1,
        bytes: out.subarray(starts[c]!, cursor[c]!),
        offsets: outOffsets.subarray(from, from + stride),
      })
    }
    this.#bytesUsed += length
    this.#offsetsUsed += offsetCount
    return columns
  }

  /**
   * Room for the group's row fingerprints, for rows 0 to `rows - 1`, keeping those of the rows before: one buffer
   * reused by every group, for the reason the copies are.
   */
  fingerprints(rows: number): BigInt64Array {
    if (rows > this.#fingerprints.length) {
      const grown = new BigInt64Array(Math.max(rows, 2 * this.#fingerprints.length))
      grown.set(this.#fingerprints)
      this.#fingerprints = grown
    }
    return this.#fingerprints
  }

  /** Nothing reads the copies made so far any more: the next ones overwrite them. */
  release(): void {
    this.#bytesUsed = 0
    this.#offsetsUsed = 0
    this.#spillAt = 0
    this.#pieces = []
  }
}
