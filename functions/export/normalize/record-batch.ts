/**
 * Parsed records -> record batches: every cell's UTF-8 bytes back to back, row after row, in one buffer, plus the
 * offset where each cell ends. Records come as byte strings (csv-parse reading fields as Latin-1: one character
 * per UTF-8 byte), so copying a cell is copying its characters; a workbook's rows come as bytes (addRow). A batch
 * is two ArrayBuffers, so it moves between threads without a copy and goes
 * to the spool file as it is; no string outlives the batch that held it, which keeps the parser's heap small.
 * The buffers come back once the batch is encoded and are reused, so a table of any size allocates a few of them.
 */

export interface RecordBatch {
  /** 1-based position in the CSV (data rows only) of the batch's first row. */
  readonly firstRow: number
  readonly rowCount: number
  readonly columnCount: number
  /** The cells' UTF-8 bytes, row-major (a view on its own ArrayBuffer). */
  readonly bytes: Uint8Array
  /**
   * `rowCount * columnCount + 1` offsets into `bytes`: the cell of row r and column c spans
   * `offsets[r * columnCount + c]` to the next offset. An empty cell (or a missing trailing one) is NULL.
   */
  readonly offsets: Int32Array
}

export interface BatchLimits {
  /** Cells per batch: bounds the offsets array whatever the table's width. */
  readonly maxCells: number
  /** Bytes of cell text per batch (a record larger than this starts a batch with a buffer large enough). */
  readonly maxBytes: number
}

/**
 * 64 Ki cells (3,276 rows of a 20-column table) or 1 MiB of text: small enough that the batches in flight between
 * the threads stay small, large enough that a message per batch costs nothing next to parsing it.
 */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxCells: 64 * 1024, maxBytes: 1024 * 1024 }

/** Cells up to this length are copied by a JS loop, which beats a native call for short ones. */
const SHORT_CELL = 32

export class RecordBatchBuilder {
  readonly #columnCount: number
  readonly #maxRows: number
  readonly #maxBytes: number
  /** Buffers of encoded batches, back for reuse. */
  readonly #free: { bytes: ArrayBuffer; offsets: ArrayBuffer }[] = []
  #bytes: Buffer
  #offsets: Int32Array
  #used = 0
  #rows = 0
  #nextRow = 1

  constructor(columnCount: number, limits: BatchLimits = DEFAULT_BATCH_LIMITS) {
    this.#columnCount = columnCount
    this.#maxRows = Math.max(1, Math.floor(limits.maxCells / Math.max(1, columnCount)))
    this.#maxBytes = limits.maxBytes
    this.#bytes = Buffer.allocUnsafeSlow(this.#maxBytes)
    this.#offsets = new Int32Array(this.#maxRows * columnCount + 1)
  }

  /**
   * Adds one record of byte strings (it may be shorter than the header); returns a finished batch when there is
   * one.
   */
  add(record: readonly string[]): RecordBatch | undefined {
    const columns = this.#columnCount
    let size = 0
    for (let c = 0; c < record.length; c++) size += record[c]!.length
    const finished = this.#makeRoom(size)
    const bytes = this.#bytes
    const offsets = this.#offsets
    let used = this.#used
    let cell = this.#rows * columns
    for (let c = 0; c < columns; c++) {
      const text = c < record.length ? record[c]! : ''
      const length = text.length
      if (length > SHORT_CELL) bytes.write(text, used, 'latin1')
      else for (let i = 0; i < length; i++) bytes[used + i] = text.charCodeAt(i)
      used += length
      offsets[++cell] = used
    }
    return this.#endRow(used, finished)
  }

  /**
   * Adds one record given as bytes: cell c is `source[starts[c]..ends[c])` for c below `count`, and empty past it
   * (a workbook's row, whose cells are read as bytes); returns a finished batch when there is one.
   */
  addRow(source: Buffer, starts: Int32Array, ends: Int32Array, count: number): RecordBatch | undefined {
    const columns = this.#columnCount
    const present = Math.min(count, columns)
    let size = 0
    for (let c = 0; c < present; c++) size += ends[c]! - starts[c]!
    const finished = this.#makeRoom(size)
    const bytes = this.#bytes
    const offsets = this.#offsets
    let used = this.#used
    let cell = this.#rows * columns
    for (let c = 0; c < columns; c++) {
      if (c < present) {
        const start = starts[c]!
        const end = ends[c]!
        if (end - start > SHORT_CELL) source.copy(bytes, used, start, end)
        else for (let i = start; i < end; i++) bytes[used + i - start] = source[i]!
        used += end - start
      }
      offsets[++cell] = used
    }
    return this.#endRow(used, finished)
  }

  /** Room for a row of `size` bytes: the rows so far become a batch first when it does not fit beside them. */
  #makeRoom(size: number): RecordBatch | undefined {
    if (this.#used + size <= this.#bytes.length) return undefined
    const finished = this.flush()
    if (size > this.#bytes.length) this.#bytes = Buffer.allocUnsafeSlow(size)
    return finished
  }

  /** Ends the row at `used` bytes; returns the batch finished before it, or by it when the batch is full. */
  #endRow(used: number, finished: RecordBatch | undefined): RecordBatch | undefined {
    this.#used = used
    this.#rows++
    return finished ?? (this.#rows === this.#maxRows ? this.flush() : undefined)
  }

  /** The rows added since the last batch, or undefined when there are none. */
  flush(): RecordBatch | undefined {
    if (this.#rows === 0) return undefined
    const rowCount = this.#rows
    const batch: RecordBatch = {
      firstRow: this.#nextRow,
      rowCount,
      columnCount: this.#columnCount,
      bytes: new Uint8Array(this.#bytes.buffer, this.#bytes.byteOffset, this.#used),
      offsets: this.#offsets.subarray(0, rowCount * this.#columnCount + 1),
    }
    this.#nextRow += rowCount
    this.#rows = 0
    this.#used = 0
    // The batch keeps (or is handed) these buffers: the next batch starts on free ones.
    const free = this.#free.pop()
    this.#bytes = free ? Buffer.from(free.bytes) : Buffer.allocUnsafeSlow(this.#maxBytes)
    this.#offsets = free ? new Int32Array(free.offsets) : new Int32Array(this.#maxRows * this.#columnCount + 1)
    return batch
  }

  /** Takes back the buffers of a batch that nothing reads any more. */
  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void {
    const fits = bytes.byteLength === this.#maxBytes && offsets.byteLength === this.#offsets.buffer.byteLength
    if (fits && !bytes.detached && !offsets.detached) this.#free.push({ bytes, offsets })
  }
}

/** The first `rows` rows of `batch`, on the same buffers (the batch itself when it has no more). */
export const firstRows = (batch: RecordBatch, rows: number): RecordBatch =>
  rows >= batch.rowCount
    ? batch
    : { ...batch, rowCount: rows, offsets: batch.offsets.subarray(0, rows * batch.columnCount + 1) }

/** Each row's cells as text ('' for an empty cell). */
export const rowsAsText = (batch: RecordBatch): string[][] => {
  const { bytes, offsets, columnCount, rowCount } = batch
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return Array.from({ length: rowCount }, (_, row) =>
    Array.from({ length: columnCount }, (_, column) => {
      const cell = row * columnCount + column
      return text.toString('utf8', offsets[cell], offsets[cell + 1])
    }),
  )
}
