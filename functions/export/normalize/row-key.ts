/**
 * A table's key (`tables[].key`): the columns that identify a row, which `<table>_changes` matches snapshots by.
 * A key that breaks in a snapshot never fails the export: rows whose key has an empty cell and rows whose key
 * repeats are counted here for the run record, and the changes view compares them by fingerprint (see there).
 */
import { KeyColumnError } from '../core/errors.ts'
import type { KeyReport } from '../core/run-record.ts'
import { SpillFile } from '../scratch/spill-file.ts'
import type { RecordBatch } from './record-batch.ts'

export type { KeyReport }

/**
 * The CSV column index of each key column. Fails (before anything is published) when the key names a column that
 * is neither in this CSV nor in the table's registry; a registered column missing from this CSV is an empty key.
 */
export const keyColumnIndices = (
  tableId: string,
  key: readonly string[],
  csvColumns: readonly string[],
  registeredColumns: readonly string[],
): number[] => {
  const missing = key.filter((name) => !csvColumns.includes(name) && !registeredColumns.includes(name))
  if (missing.length > 0)
    throw new KeyColumnError(tableId, missing, [...new Set([...registeredColumns, ...csvColumns])])
  return key.map((name) => csvColumns.indexOf(name))
}

/**
 * A counter for the table's key, once the key is known to name its columns (see keyColumnIndices). `spillPath`
 * names the file the key hashes spill to past `maxHeld` distinct keys; nothing is written below that.
 */
export const openKeyCounter = (
  tableId: string,
  key: readonly string[],
  csvColumns: readonly string[],
  registeredColumns: readonly string[],
  spillPath: string,
): KeyCounter => new KeyCounter(key, keyColumnIndices(tableId, key, csvColumns, registeredColumns), spillPath)

/** Run-record warnings for a snapshot's broken keys, if any. */
export const keyWarnings = ({ columns, emptyKeys, duplicateKeys }: KeyReport): string[] => {
  const key = columns.join(', ')
  return [
    ...(emptyKeys > 0 ? [`${emptyKeys} rows have an empty key (${key})`] : []),
    ...(duplicateKeys > 0 ? [`${duplicateKeys} rows repeat the key (${key}) of an earlier row`] : []),
  ].map((problem) => `${problem}; the export went ahead, and the changes view compares such rows by fingerprint`)
}

/** Initial slots of a hash set; it doubles as it fills. */
const INITIAL_SLOTS = 1 << 12
/** Distinct keys held in memory before the hashes spill to disk: a set of 2^20 slots, 8 MiB. */
const MAX_HELD_KEYS = 1 << 19
/** Key hashes written to the spill file at a time. */
const SPILL_BATCH = 8192

/**
 * Counts empty and repeated keys over a snapshot's batches. Keys are kept as 52-bit hashes, not as strings. Up to
 * `maxHeld` distinct keys the hashes are held in an open-addressing set; past that every hash goes to a spill
 * file, and the repeats among them are counted at the end in passes over the file, each pass holding one slice of
 * the hash range (`hash % passes`) in a set of about `maxHeld`. So memory stays the same for any number of rows,
 * and the count stays exact: equal hashes always fall in the same slice. Two different keys that share a hash
 * (about one pair in 10^15 for a million rows) would count as one duplicate.
 */
export class KeyCounter {
  readonly #columns: readonly string[]
  readonly #indices: readonly number[]
  readonly #spillPath: string
  readonly #maxHeld: number
  #held = new HashSet()
  #spill: KeySpill | undefined
  #empty = 0
  #duplicates = 0
  #report: KeyReport | undefined

  /** `indices[i]` is the CSV column of key column i, or -1 when the CSV lacks it. */
  constructor(columns: readonly string[], indices: readonly number[], spillPath: string, maxHeld = MAX_HELD_KEYS) {
    this.#columns = columns
    this.#indices = indices
    this.#spillPath = spillPath
    this.#maxHeld = maxHeld
  }

  /** Whether the hashes went to the spill file (the table has more than `maxHeld` distinct keys). */
  get spilled(): boolean {
    return this.#spill !== undefined
  }

  observe({ bytes, offsets, columnCount, rowCount }: RecordBatch): void {
    for (let row = 0; row < rowCount; row++) {
      let h1 = 0x811c9dc5
      let h2 = 0x01000193
      let empty = false
      for (let k = 0; k < this.#indices.length && !empty; k++) {
        const index = this.#indices[k]!
        const start = index < 0 ? 0 : offsets[row * columnCount + index]!
        const end = index < 0 ? 0 : offsets[row * columnCount + index + 1]!
        if (start === end) empty = true
        for (let b = start; b < end; b++) {
          h1 = Math.imul(h1 ^ bytes[b]!, 0x01000193)
          h2 = Math.imul(h2 ^ bytes[b]!, 0x5bd1e995)
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        h1 = Math.imul(h1 ^ 0xff, 0x01000193)
        h2 = Math.imul(h2 ^ 0xff, 0x5bd1e995)
      }
      if (empty) this.#empty++
      else this.#count((h1 >>> 0) * 0x100000 + ((h2 >>> 12) & 0xfffff) + 1)
    }
  }

  /** The counts, once every batch is observed (the spilled hashes are counted here, once). */
  report(): KeyReport {
    this.#report ??= {
      columns: this.#columns,
      emptyKeys: this.#empty,
      duplicateKeys: this.#duplicates + (this.#spill?.repeats(this.#maxHeld) ?? 0),
    }
    return this.#report
  }

  /** Removes the spill file, if any. */
  close(): void {
    this.#spill?.close()
  }

  #count(hash: number): void {
    if (this.#spill) {
      this.#spill.append(hash)
      return
    }
    if (!this.#held.add(hash)) {
      this.#duplicates++
      return
    }
    if (this.#held.size < this.#maxHeld) return
    // The held hashes are distinct (their repeats are counted already): they go first, and the set is let go.
    const spill = new KeySpill(this.#spillPath)
    for (const held of this.#held.values()) spill.append(held)
    this.#spill = spill
    this.#held = new HashSet()
  }
}

/** An open-addressing set of non-zero hashes below 2^53, held as doubles, at most half full. */
class HashSet {
  #slots = new Float64Array(INITIAL_SLOTS)
  #size = 0

  get size(): number {
    return this.#size
  }

  /** Adds a hash; false when it was there already. */
  add(hash: number): boolean {
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow()
    const mask = this.#slots.length - 1
    for (let slot = hash % this.#slots.length; ; slot = (slot + 1) & mask) {
      const held = this.#slots[slot]!
      if (held === hash) return false
      if (held === 0) {
        this.#slots[slot] = hash
        this.#size++
        return true
      }
    }
  }

  *values(): Generator<number> {
    for (const hash of this.#slots) if (hash !== 0) yield hash
  }

  #grow(): void {
    const old = this.#slots
    this.#slots = new Float64Array(old.length * 2)
    this.#size = 0
    for (const hash of old) if (hash !== 0) this.add(hash)
  }
}

/** Key hashes on the spool disk, 8 bytes each, and the count of repeats among them. */
class KeySpill {
  readonly #file: SpillFile
  readonly #pending = new Float64Array(SPILL_BATCH)
  #buffered = 0
  #count = 0

  constructor(path: string) {
    this.#file = new SpillFile(path)
  }

  append(hash: number): void {
    this.#pending[this.#buffered++] = hash
    this.#count++
    if (this.#buffered === SPILL_BATCH) this.#flush()
  }

  /** Hashes that equal an earlier one in the file, counted slice by slice of the hash range. */
  repeats(maxHeld: number): number {
    this.#flush()
    this.#file.seal()
    const passes = Math.ceil(this.#count / maxHeld)
    let distinct = 0
    for (let pass = 0; pass < passes; pass++) {
      const slice = new HashSet()
      for (const block of this.#file.blocks(8 * SPILL_BATCH)) {
        for (let at = 0; at < block.length; at += 8) {
          const hash = block.readDoubleLE(at)
          if (hash % passes === pass) slice.add(hash)
        }
      }
      distinct += slice.size
    }
    return this.#count - distinct
  }

  close(): void {
    this.#file.close()
  }

  #flush(): void {
    if (this.#buffered === 0) return
    this.#file.append(new Uint8Array(this.#pending.buffer, 0, 8 * this.#buffered))
    this.#buffered = 0
  }
}
