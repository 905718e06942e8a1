/**
 * Row fingerprints: one BIGINT per row that stands for its data, so comparing two snapshots of a row compares one
 * column. The hash input is, for each non-empty cell in the order of the column names (byte order), the column's
 * name in UTF-8, a 0x00 byte, the cell's byte length as a 32-bit big-endian integer, then the cell's UTF-8 bytes
 * as the service sent them, but for an instant or a boolean, which is hashed in its one notation (canonical-cell.ts),
 * so the same values read from the CSV and from the workbook give the same fingerprint. The fingerprint is the
 * first 8 bytes of the input's SHA-256, read as a signed big-endian 64-bit integer. Because empty cells are left
 * out and columns are ordered by name, the same values give the same fingerprint on every run, whatever the column
 * order, and after columns are added (a row that has no value in the new column keeps its fingerprint). The
 * cell's text is hashed, not the typed value, so a type that widens changes no fingerprint. In Athena the same
 * number is `from_big_endian_64(substr(sha256(<input>), 1, 8))`.
 */
import { hash } from 'node:crypto'
import { MAX_CANONICAL_BYTES, mayRespell, writeCanonicalCell } from './canonical-cell.ts'
import type { RecordBatch } from './record-batch.ts'

/** A BigInt64Array holds its values in the platform's byte order; the two 32-bit halves are written through it. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const HIGH_HALF = LITTLE_ENDIAN ? 4 : 0
const LOW_HALF = 4 - HIGH_HALF

/**
 * Bytes the word copies below may write past the end of a piece (a name, a cell): the next piece overwrites them,
 * or they lie past the input's end, so the buffer keeps this much room beyond the largest input.
 */
const OVERSHOOT = 8

export class RowFingerprinter {
  /** CSV column indices in the order of their names. */
  readonly #order: Int32Array
  /** Per entry of #order: the column's name in UTF-8 and a 0x00 byte, as little-endian words padded with zeros. */
  readonly #nameWords: Int32Array
  /** Where each entry's words start in #nameWords (and the end of the last). */
  readonly #nameWordStarts: Int32Array
  /** Per entry of #order: the byte length of its name and 0x00 byte. */
  readonly #nameBytes: Int32Array
  /** Bytes of a row's input besides its cells': every name, its 0x00 byte, a length, and room for a notation. */
  readonly #fixedBytes: number
  #input = Buffer.allocUnsafeSlow(4096)
  #output = new DataView(this.#input.buffer, this.#input.byteOffset, this.#input.byteLength)
  /**
   * Views of #input by length, made once each: rows of a table span a few hundred lengths, and a view per row was
   * a sixth of the main thread's allocations (young-generation garbage the collector then has to scavenge).
   */
  #views: (Buffer | undefined)[] = new Array(this.#input.length + 1)

  /** `columnNames[i]` is the warehouse name of CSV column i. */
  constructor(columnNames: readonly string[]) {
    const byName = columnNames.map((name, index) => ({ name: Buffer.from(name, 'utf8'), index }))
    byName.sort((a, b) => Buffer.compare(a.name, b.name))
    this.#order = Int32Array.from(byName, (c) => c.index)
    this.#nameBytes = Int32Array.from(byName, (c) => c.name.length + 1)
    this.#nameWordStarts = new Int32Array(byName.length + 1)
    const words: number[] = []
    byName.forEach(({ name }, i) => {
      this.#nameWordStarts[i] = words.length
      const padded = Buffer.alloc(Math.ceil((name.length + 1) / 4) * 4)
      name.copy(padded)
      for (let at = 0; at < padded.length; at += 4) words.push(padded.readInt32LE(at))
    })
    this.#nameWordStarts[byName.length] = words.length
    this.#nameWords = Int32Array.from(words)
    // A cell's one notation (canonical-cell.ts) may be longer than the cell: room for the longest in every cell.
    this.#fixedBytes = this.#nameBytes.reduce((sum, n) => sum + n + 4 + MAX_CANONICAL_BYTES, 0)
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
    const cells = new DataView(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength)
    for (let r = 0, byte = at * 8; r < batch.rowCount; r++, byte += 8) {
      // The digest as a binary (Latin-1) string, a character per byte, and no BigInt per row: allocating a
      // Buffer for it and reading a BigInt from that cost more than hashing the row (1.6 against 0.3 µs).
      const digest = hash('sha256', this.#rowInput(batch, cells, r), 'binary')
      halves.setInt32(byte + HIGH_HALF, wordAt(digest, 0), LITTLE_ENDIAN)
      halves.setInt32(byte + LOW_HALF, wordAt(digest, 4), LITTLE_ENDIAN)
    }
  }

  /**
   * The hash input of one row (a view on a buffer reused from row to row). Names and cells are copied four bytes
   * at a time through DataViews (little-endian both ways, so byte order is kept on any platform): copying them a
   * byte at a time was over half of fingerprinting a row, itself about a fifth of the main thread's CPU.
   */
  #rowInput({ bytes, offsets, columnCount }: RecordBatch, cells: DataView, row: number): Buffer {
    const first = row * columnCount
    const most = this.#fixedBytes + offsets[first + columnCount]! - offsets[first]! + OVERSHOOT
    if (most > this.#input.length) {
      this.#input = Buffer.allocUnsafeSlow(Math.max(most, this.#input.length * 2))
      this.#output = new DataView(this.#input.buffer, this.#input.byteOffset, this.#input.byteLength)
      this.#views = new Array(this.#input.length + 1)
    }
    const input = this.#input
    const output = this.#output
    const order = this.#order
    const nameWords = this.#nameWords
    const nameWordStarts = this.#nameWordStarts
    /** The last offset a word can be read from. */
    const lastWord = cells.byteLength - 4
    let at = 0
    for (let i = 0; i < order.length; i++) {
      const cell = first + order[i]!
      const start = offsets[cell]!
      const end = offsets[cell + 1]!
      if (end === start) continue
      for (let w = nameWordStarts[i]!, o = at; w < nameWordStarts[i + 1]!; w++, o += 4) {
        output.setInt32(o, nameWords[w]!, true)
      }
      at += this.#nameBytes[i]!
      // Only a cell that may have another spelling is looked at: the others (and those spelt as hashed) skip it.
      const canonical = mayRespell(bytes, start, end) ? writeCanonicalCell(bytes, start, end, input, at + 4) : -1
      output.setUint32(at, canonical < 0 ? end - start : canonical, false)
      at += 4
      if (canonical >= 0) {
        at += canonical
        continue
      }
      let b = start
      let o = at
      for (; b < end && b <= lastWord; b += 4, o += 4) output.setInt32(o, cells.getInt32(b, true), true)
      for (; b < end; b++, o++) input[o] = bytes[b]!
      at += end - start
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
