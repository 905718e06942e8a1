/**
 * Type inference over every value of a column. Each column keeps the set of types that all its values so far
 * fit; a value only narrows the set, so the order of rows never matters and nothing is sampled.
 * Cells are read as UTF-8 bytes (record batches).
 */
import { ColumnType } from '../core/constants.ts'
import { DataError } from '../core/errors.ts'
import type { RecordBatch } from './record-batch.ts'
import { bigintAt, booleanAt, dateAt, doubleAt, timestampAt } from './values.ts'

const Fits = {
  BIGINT: 1,
  DOUBLE: 2,
  BOOLEAN: 4,
  DATE: 8,
  TIMESTAMP: 16,
} as const
const ALL = Fits.BIGINT | Fits.DOUBLE | Fits.BOOLEAN | Fits.DATE | Fits.TIMESTAMP

/** The narrowest type in precedence order. */
const PRECEDENCE: readonly [number, ColumnType][] = [
  [Fits.BIGINT, ColumnType.BIGINT],
  [Fits.DOUBLE, ColumnType.DOUBLE],
  [Fits.BOOLEAN, ColumnType.BOOLEAN],
  [Fits.DATE, ColumnType.DATE],
  [Fits.TIMESTAMP, ColumnType.TIMESTAMP],
]

const fitsAt = (bytes: Uint8Array, start: number, end: number, candidates: number): number => {
  let fits = 0
  if (candidates & Fits.BIGINT && bigintAt(bytes, start, end)) fits |= Fits.BIGINT
  if (candidates & Fits.DOUBLE && doubleAt(bytes, start, end)) fits |= Fits.DOUBLE
  if (candidates & Fits.BOOLEAN && booleanAt(bytes, start, end)) fits |= Fits.BOOLEAN
  if (candidates & Fits.DATE && dateAt(bytes, start, end)) fits |= Fits.DATE
  if (candidates & Fits.TIMESTAMP && timestampAt(bytes, start, end)) fits |= Fits.TIMESTAMP
  return fits
}

const FIT_OF_TYPE: Readonly<Record<ColumnType, number>> = {
  bigint: Fits.BIGINT,
  double: Fits.DOUBLE,
  boolean: Fits.BOOLEAN,
  date: Fits.DATE,
  timestamp: Fits.TIMESTAMP,
  string: 0,
}

interface ColumnTypeInferrerOptions {
  readonly tableId: string
  readonly columnNames: readonly string[]
  /** Types forced by configuration; their values are checked instead of inferred. */
  readonly forced?: Readonly<Record<string, ColumnType>>
}

export class ColumnTypeInferrer {
  readonly #candidates: Uint8Array
  readonly #seen: Uint8Array
  readonly #forced: readonly (ColumnType | undefined)[]
  readonly #options: ColumnTypeInferrerOptions
  #revision = 0

  constructor(options: ColumnTypeInferrerOptions) {
    const { columnNames, forced = {} } = options
    this.#options = options
    this.#forced = columnNames.map((name) => forced[name])
    this.#candidates = Uint8Array.from(columnNames, (_, i) => {
      const type = this.#forced[i]
      return type === undefined ? ALL : FIT_OF_TYPE[type]
    })
    this.#seen = new Uint8Array(columnNames.length)
  }

  /**
   * Counts the changes to what the values seen so far fit (a column's candidate types, or its first value): the
   * answers of `types()` and `fits()` can only change when it does, so a caller replans only then.
   */
  get revision(): number {
    return this.#revision
  }

  /** Narrows every column by its cells in `batch`: one pass over each column's cells, as the batch goes by. */
  observe(batch: RecordBatch): void {
    for (let column = 0; column < batch.columnCount; column++) this.observeBatch(column, batch)
  }

  /** Narrows column `index` by its cells in `batch`. */
  observeBatch(index: number, batch: RecordBatch): void {
    if (this.#settled(index)) return
    const { bytes, offsets, columnCount, rowCount } = batch
    const before = this.#candidates[index]!
    const seenBefore = this.#seen[index]
    let candidates = before
    for (let row = 0, cell = index; row < rowCount; row++, cell += columnCount) {
      const start = offsets[cell]!
      const end = offsets[cell + 1]!
      if (start === end) continue
      const fits = fitsAt(bytes, start, end, candidates)
      candidates = this.#narrow(index, candidates, fits, batch.firstRow + row, bytes, start, end)
      if (candidates === 0 && this.#forced[index] === undefined) break
    }
    this.#candidates[index] = candidates
    if (candidates !== before || this.#seen[index] !== seenBefore) this.#revision++
  }

  /** Already STRING (inferred or forced): no value can change the type, so the values are not looked at. */
  #settled(index: number): boolean {
    const forced = this.#forced[index]
    if (this.#candidates[index] !== 0 || (forced !== undefined && forced !== ColumnType.STRING)) return false
    if (this.#seen[index] === 0) this.#revision++
    this.#seen[index] = 1
    return true
  }

  /** The candidates left after a value that fits `fits`; a value outside a forced type fails the table. */
  #narrow(
    index: number,
    candidates: number,
    fits: number,
    row: number,
    bytes: Uint8Array,
    start: number,
    end = bytes.length,
  ): number {
    this.#seen[index] = 1
    const forced = this.#forced[index]
    if (fits === 0 && forced !== undefined && forced !== ColumnType.STRING) {
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)
      throw new DataError('VALUE_OUT_OF_RANGE', {
        tableId: this.#options.tableId,
        reason: `row ${row}: "${clip(text)}" in column ${this.#options.columnNames[index]} is not a ${forced}, the type forced by "columnTypes"`,
        hint: 'remove the column from "columnTypes" or force it to "string"; the previous data is kept',
      })
    }
    return candidates & fits
  }

  /** Whether every value of column `index` seen so far is a faithful value of `type` (STRING always is). */
  fits(index: number, type: ColumnType): boolean {
    if (type === ColumnType.STRING || this.#seen[index] === 0) return true
    return (this.#candidates[index]! & FIT_OF_TYPE[type]) !== 0
  }

  /** Final types: the forced one, else the narrowest that every value fits; all-empty columns are STRING. */
  types(): ColumnType[] {
    return this.#options.columnNames.map((_, index) => {
      const forced = this.#forced[index]
      if (forced !== undefined) return forced
      if (this.#seen[index] === 0) return ColumnType.STRING
      const candidates = this.#candidates[index]!
      for (const [fit, type] of PRECEDENCE) if (candidates & fit) return type
      return ColumnType.STRING
    })
  }
}

const clip = (text: string): string => (text.length > 60 ? `${text.slice(0, 57)}...` : text)
