/**
 * Reused buffers for the values of the column chunk being written. A row group makes each column's values only
 * when its chunk is written, and writes the chunk synchronously, so one set of buffers serves every column of
 * every table; values made into them are valid until the next column's are made.
 *
 * Why: fresh buffers per column (about 8 MiB a row group on the bench table) outlive a scavenge or two while the
 * group is encoded, are promoted, and then wait for a full garbage collection, which V8 schedules late while the
 * main thread's heap is small. The first such wait piled up 40-60 MiB of dead buffers in some runs and not in
 * others, and the allocator kept the pages: the spread in peak RSS between runs (docs/performance.md#memory).
 */

/** Headroom when a buffer grows, so a slightly larger chunk does not allocate again. */
const GROWTH = 1.25

export class ScratchBuffer {
  #buffer = new ArrayBuffer(0)

  /** At least `byteLength` bytes, zeroed up to it when `zeroed` (a buffer filled by ORing in bits or flags). */
  take(byteLength: number, zeroed: boolean): ArrayBuffer {
    if (this.#buffer.byteLength < byteLength) {
      this.#buffer = new ArrayBuffer(Math.ceil((byteLength * GROWTH) / 8) * 8)
    } else if (zeroed) {
      new Uint8Array(this.#buffer, 0, byteLength).fill(0)
    }
    return this.#buffer
  }
}

/** One buffer per array a chunk's values hold at once: the values, the byte arrays' starts, the defined flags. */
export const chunkScratch = {
  values: new ScratchBuffer(),
  starts: new ScratchBuffer(),
  defined: new ScratchBuffer(),
} as const
