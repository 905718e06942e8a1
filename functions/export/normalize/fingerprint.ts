/**
 * Row fingerprints: one BIGINT per row that stands for its data, so comparing two snapshots of a row compares one
 * column. The hash input is, for each non-empty cell in the order of the column names (byte order), the column's
 * name in UTF-8, a 0x00 byte, the cell's byte length as a 32-bit big-endian integer, then the cell's UTF-8 bytes
 * as the service sent them. The fingerprint is the first 8 bytes of the input's SHA-256, read as a signed
 * big-endian 64-bit integer. Because empty cells are left out and columns are ordered by name, the same values
 * give the same fingerprint on every run, whatever the column order, and after columns are added (a row that has
 * no value in the new column keeps its fingerprint). The raw cell text is hashed, not the typed value, so a type
 * that widens changes no fingerprint. In Athena the same number is
 * `from_big_endian_64(substr(sha256(<input>), 1, 8))`.
 */
import { hash } from 'node:crypto'
import type { RecordBatch } from './record-batch.ts'

/** A BigInt64Array holds its values in the platform's byte order; the two 32-bit halves are written through it. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const HIGH_HALF = LITTLE_ENDIAN ? 4 : 0
const LOW_HALF = 4 - HIGH_HALF

export class RowFingerprinter {
  /** CSV column indices in the order of their names. */
  readonly #order: readonly number[]
  /** Per entry of #order: the column's name in UTF-8 and a 0x00 byte. */
  readonly #prefixes: readonly Buffer[]
  #input = Buffer.allocUnsafeSlow(4096)
  /**
   * Views of #input by length, made once each: rows of a table span a few hundred lengths, and a view per row was
   * a sixth of the main thread's allocations (young-generation garbage the collector then has to scavenge).
   */
  #views: (Buffer | undefined)[] = new Array(this.#input.length + 1)

  /** `columnNames[i]` is the warehouse name of CSV column i. */
  constructor(columnNames: readonly string[]) {
    const byName = columnNames.map((name, index) => ({ name: Buffer.from(name, 'utf8'), index }))
    byName.sort((a, b) => Buffer.compare(a.name, b.name))
    this.#order = byName.map((c) => c.index)
    this.#prefixes = byName.map((c) => Buffer.concat([c.name, Buffer.of(0)]))
  }

  /** The fingerprints of every row of `batches`, in order. */
  fingerprints(batches: readonly RecordBatch[], rows: number): BigInt64Array {
    const out = new BigInt64Array(rows)
    let at = 0
    for (const batch of batches) {
      this.fingerprintInto(batch, out, at)
      at += batch.rowCount
    }
    return out
  }

  /** The fingerprints of the rows of `batch`, written to `out` from index `at`. */
  fingerprintInto(batch: RecordBatch, out: BigInt64Array, at: number): void {
    const halves = new DataView(out.buffer, out.byteOffset, out.byteLength)
    for (let r = 0, byte = at * 8; r < batch.rowCount; r++, byte += 8) {
      // The digest as a binary (Latin-1) string, a character per byte, and no BigInt per row: allocating a
      // Buffer for it and reading a BigInt from that cost more than hashing the row (1.6 against 0.3 µs).
      const digest = hash('sha256', this.#rowInput(batch, r), 'binary')
      halves.setInt32(byte + HIGH_HALF, wordAt(digest, 0), LITTLE_ENDIAN)
      halves.setInt32(byte + LOW_HALF, wordAt(digest, 4), LITTLE_ENDIAN)
    }
  }

  /** The hash input of one row (a view on a buffer reused from row to row). */
  #rowInput({ bytes, offsets, columnCount }: RecordBatch, row: number): Buffer {
    const first = row * columnCount
    let size = 0
    for (let i = 0; i < this.#order.length; i++) {
      const cell = first + this.#order[i]!
      const length = offsets[cell + 1]! - offsets[cell]!
      if (length > 0) size += this.#prefixes[i]!.length + 4 + length
    }
    if (size > this.#input.length) {
      this.#input = Buffer.allocUnsafeSlow(Math.max(size, this.#input.length * 2))
      this.#views = new Array(this.#input.length + 1)
    }
    const input = this.#input
    let at = 0
    for (let i = 0; i < this.#order.length; i++) {
      const cell = first + this.#order[i]!
      const start = offsets[cell]!
      const length = offsets[cell + 1]! - start
      if (length === 0) continue
      const prefix = this.#prefixes[i]!
      for (let b = 0; b < prefix.length; b++) input[at++] = prefix[b]!
      input[at++] = length >>> 24
      input[at++] = (length >>> 16) & 0xff
      input[at++] = (length >>> 8) & 0xff
      input[at++] = length & 0xff
      if (length > 32) {
        input.set(bytes.subarray(start, start + length), at)
        at += length
      } else for (let b = 0; b < length; b++) input[at++] = bytes[start + b]!
    }
    let view = this.#views[at]
    if (view === undefined) {
      view = input.subarray(0, at)
      this.#views[at] = view
    }
    return view
  }
}

/** The big-endian 32-bit word at `at` of a byte string. */
const wordAt = (bytes: string, at: number): number =>
  (bytes.charCodeAt(at) << 24) |
  (bytes.charCodeAt(at + 1) << 16) |
  (bytes.charCodeAt(at + 2) << 8) |
  bytes.charCodeAt(at + 3)
