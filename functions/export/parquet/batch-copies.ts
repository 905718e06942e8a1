/**
 * The copies of a row group's batches, in two buffers reused from one group to the next. A group outlives the
 * parser's buffers (they go back for reuse at once), so its batches are copied; copies made fresh for every batch
 * live long enough to reach V8's old generation, where they wait for a full collection, and tens of MiB of dead
 * copies then sat in memory at times. Here the group's copies are views on one byte buffer and one offsets buffer,
 * which only grow (to the largest group seen) and are rewritten by the next group.
 */
import type { RecordBatch } from '../normalize/record-batch.ts'

/** First capacity of each buffer; it doubles (at least) when a group needs more. */
const INITIAL_BYTES = 1024 * 1024

export class BatchCopies {
  #bytes = new Uint8Array(INITIAL_BYTES)
  #offsets = new Int32Array(INITIAL_BYTES / 4)
  #bytesUsed = 0
  #offsetsUsed = 0

  /** Bytes the two buffers hold, whatever part of them is in use. */
  get capacityBytes(): number {
    return this.#bytes.byteLength + this.#offsets.byteLength
  }

  /** A copy of `batch` that stays as it is until the next `release()`. */
  copy(batch: RecordBatch): RecordBatch {
    const length = batch.bytes.length
    const cells = batch.offsets.length
    // A buffer too small is replaced, not extended: the copies already made keep their views on the old one.
    if (this.#bytesUsed + length > this.#bytes.length) {
      this.#bytes = new Uint8Array(Math.max(this.#bytes.length * 2, length))
      this.#bytesUsed = 0
    }
    if (this.#offsetsUsed + cells > this.#offsets.length) {
      this.#offsets = new Int32Array(Math.max(this.#offsets.length * 2, cells))
      this.#offsetsUsed = 0
    }
    const bytes = this.#bytes.subarray(this.#bytesUsed, this.#bytesUsed + length)
    const offsets = this.#offsets.subarray(this.#offsetsUsed, this.#offsetsUsed + cells)
    bytes.set(batch.bytes)
    offsets.set(batch.offsets)
    this.#bytesUsed += length
    this.#offsetsUsed += cells
    return { ...batch, bytes, offsets }
  }

  /** Nothing reads the copies made so far any more: the next ones overwrite them. */
  release(): void {
    this.#bytesUsed = 0
    this.#offsetsUsed = 0
  }
}
