/**
 * A table's key (`tables[].key`): the columns that identify a row, which `<table>_changes` matches snapshots by.
 * A key that breaks in a snapshot never fails the export: rows whose key has an empty cell and rows whose key
 * repeats are counted here for the run record, and the changes view compares them by fingerprint (see there).
 */
import { KeyColumnError } from '../errors.ts'
import type { KeyReport } from '../run-record.ts'
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

/** A counter for the table's key, once the key is known to name its columns (see keyColumnIndices). */
export const openKeyCounter = (
  tableId: string,
  key: readonly string[],
  csvColumns: readonly string[],
  registeredColumns: readonly string[],
): KeyCounter => new KeyCounter(key, keyColumnIndices(tableId, key, csvColumns, registeredColumns))

/** Run-record warnings for a snapshot's broken keys, if any. */
export const keyWarnings = ({ columns, emptyKeys, duplicateKeys }: KeyReport): string[] => {
  const key = columns.join(', ')
  return [
    ...(emptyKeys > 0 ? [`${emptyKeys} rows have an empty key (${key})`] : []),
    ...(duplicateKeys > 0 ? [`${duplicateKeys} rows repeat the key (${key}) of an earlier row`] : []),
  ].map((problem) => `${problem}; the export went ahead, and the changes view compares such rows by fingerprint`)
}

/** Initial slots of the key set; it doubles as it fills. */
const INITIAL_SLOTS = 1 << 12

/**
 * Counts empty and repeated keys over a snapshot's batches. Keys are kept as 52-bit hashes in an open-addressing
 * table of doubles (16 bytes a row at worst), not as strings: a million-row table costs 16 MiB, not a few hundred.
 * Two different keys that share a hash (about one pair in 10^15 for a million rows) would count as one duplicate.
 */
export class KeyCounter {
  readonly #columns: readonly string[]
  readonly #indices: readonly number[]
  #slots = new Float64Array(INITIAL_SLOTS)
  #used = 0
  #empty = 0
  #duplicates = 0

  /** `indices[i]` is the CSV column of key column i, or -1 when the CSV lacks it. */
  constructor(columns: readonly string[], indices: readonly number[]) {
    this.#columns = columns
    this.#indices = indices
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
      else if (!this.#add((h1 >>> 0) * 0x100000 + ((h2 >>> 12) & 0xfffff) + 1)) this.#duplicates++
    }
  }

  report(): KeyReport {
    return { columns: this.#columns, emptyKeys: this.#empty, duplicateKeys: this.#duplicates }
  }

  /** Adds a non-zero hash; false when it was there already. */
  #add(hash: number): boolean {
    if ((this.#used + 1) * 2 > this.#slots.length) this.#grow()
    const mask = this.#slots.length - 1
    for (let slot = hash % this.#slots.length; ; slot = (slot + 1) & mask) {
      const held = this.#slots[slot]!
      if (held === hash) return false
      if (held === 0) {
        this.#slots[slot] = hash
        this.#used++
        return true
      }
    }
  }

  #grow(): void {
    const old = this.#slots
    this.#slots = new Float64Array(old.length * 2)
    this.#used = 0
    for (const hash of old) if (hash !== 0) this.#add(hash)
  }
}

/**
 * The first column whose cells in `sample` are all non-empty and all different: what `npm run check` suggests as
 * `tables[].key`. Undefined when there is none, or when the sample has fewer than two rows to judge from.
 */
export const suggestKey = (
  columnNames: readonly string[],
  sample: readonly (readonly string[])[],
): string | undefined => {
  if (sample.length < 2) return undefined
  return columnNames.find((_, index) => {
    const seen = new Set<string>()
    for (const record of sample) {
      const cell = record[index]
      if (!cell || seen.has(cell)) return false
      seen.add(cell)
    }
    return true
  })
}
