/**
 * The cells of the worksheet row being read, as bytes: each cell's UTF-8 bytes appended to one buffer and its range
 * kept by column. Cells reach the record batch from here (RecordBatchBuilder.addRow) without a JS string per cell;
 * keeping ranges by column lets a row name its cells in any order, or one twice (the later wins), as a row of
 * strings did.
 */

/**
 * Up to this length a cell's bytes are copied by a JS loop, which beats a native call for short ones (and a
 * Buffer's subarray, an object each).
 */
const SHORT_COPY = 64

export class RowBytes {
  bytes: Buffer = Buffer.allocUnsafe(4096)
  /** Bytes appended for this row (a cell written twice keeps both, as the row's byte count did). */
  length = 0
  /** Columns up to the last one written; columns never written are empty. */
  count = 0
  starts = new Int32Array(64)
  ends = new Int32Array(64)

  clear(): void {
    this.length = 0
    this.count = 0
  }

  /** Appends `from[start..end)` to the cell being written. */
  append(from: Uint8Array, start: number, end: number): void {
    const length = end - start
    if (this.length + length > this.bytes.length) this.#grow(this.length + length)
    const bytes = this.bytes
    if (length > SHORT_COPY) bytes.set(from.subarray(start, end), this.length)
    else for (let i = 0; i < length; i++) bytes[this.length + i] = from[start + i]!
    this.length += length
  }

  /** Appends a byte string (one character per byte) to the cell being written. */
  appendText(text: string): void {
    if (this.length + text.length > this.bytes.length) this.#grow(this.length + text.length)
    this.length += this.bytes.write(text, this.length, 'latin1')
  }

  /** The bytes from `start` to the end are the cell of `column`. */
  set(column: number, start: number): void {
    if (column >= this.starts.length) {
      const size = Math.max(column + 1, this.starts.length * 2)
      const starts = new Int32Array(size)
      const ends = new Int32Array(size)
      starts.set(this.starts)
      ends.set(this.ends)
      this.starts = starts
      this.ends = ends
    }
    for (let c = this.count; c < column; c++) {
      this.starts[c] = 0
      this.ends[c] = 0
    }
    this.starts[column] = start
    this.ends[column] = this.length
    if (column >= this.count) this.count = column + 1
  }

  /** The cell of `column` as UTF-8 text. */
  text(column: number): string {
    return this.bytes.toString('utf8', this.starts[column]!, this.ends[column]!)
  }

  #grow(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(needed, this.bytes.length * 2))
    this.bytes.copy(grown, 0, 0, this.length)
    this.bytes = grown
  }
}
