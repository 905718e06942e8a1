/**
 * Convert stage: the cells of one CSV column, over the batches of a row group -> one column of values in the form
 * hyparquet-writer takes, read with the same value definitions inference used. Inference guarantees every
 * non-empty cell converts; a cell that does not (possible only when the registry pins an older type) goes to the
 * `__text` companion column, or is a bug.
 */
import type { ColumnType } from '../constants.ts'
import { InternalError } from '../errors.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import { bigintAt, booleanAt, dateAt, doubleAt, parsed, timestampAt } from '../normalize/values.ts'
import type { ColumnValues } from './encode.ts'

export type TypedColumnType = Exclude<ColumnType, 'string'>

type CellReader = (bytes: Uint8Array, start: number, end: number) => boolean

const READ: Readonly<Record<TypedColumnType, CellReader>> = {
  bigint: bigintAt,
  timestamp: timestampAt,
  double: doubleAt,
  date: dateAt,
  boolean: booleanAt,
}

/** The value `parsed` holds, as hyparquet-writer takes `type` (INT64 as bigint, BOOLEAN as boolean). */
const VALUE: Readonly<Record<TypedColumnType, () => bigint | number | boolean>> = {
  bigint: () => (parsed.isBig ? parsed.big : BigInt(parsed.value)),
  // The writer turns TIMESTAMP_MILLIS numbers into INT64 itself.
  timestamp: () => parsed.value,
  double: () => parsed.value,
  date: () => parsed.value,
  boolean: () => parsed.value === 1,
}

const textOf = (bytes: Uint8Array, start: number, end: number): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)

/** Visits every cell of `column`, row by row over the batches: `visit(bytes, start, end, row)`. */
const eachCell = (
  batches: readonly RecordBatch[],
  column: number,
  visit: (bytes: Uint8Array, start: number, end: number, row: number) => void,
): void => {
  let row = 0
  for (const { bytes, offsets, columnCount, rowCount } of batches) {
    for (let r = 0, cell = column; r < rowCount; r++, cell += columnCount, row++) {
      visit(bytes, offsets[cell]!, offsets[cell + 1]!, row)
    }
  }
}

/**
 * A STRING column: each cell's UTF-8 bytes as a view on its batch (the writer then neither encodes them again nor
 * compares them as UTF-16); empty cells are NULL.
 */
export const stringValues = (batches: readonly RecordBatch[], column: number, rows: number): ColumnValues => {
  const out: ColumnValues = new Array(rows)
  eachCell(batches, column, (bytes, start, end, row) => {
    out[row] = start === end ? null : new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start)
  })
  return out
}

/**
 * A typed column. A cell that does not convert is NULL when the column has a companion to hold its text
 * (`misfitText`), and a bug otherwise.
 */
export const typedValues = (
  batches: readonly RecordBatch[],
  column: number,
  type: TypedColumnType,
  rows: number,
  hasCompanion: boolean,
): ColumnValues => {
  const read = READ[type]
  const value = VALUE[type]
  const out: ColumnValues = new Array(rows)
  eachCell(batches, column, (bytes, start, end, row) => {
    if (start === end) out[row] = null
    else if (read(bytes, start, end)) out[row] = value()
    else if (hasCompanion) out[row] = null
    else {
      throw new InternalError({
        reason: `the value "${textOf(bytes, start, end).slice(0, 40)}" does not convert to ${type}, though inference chose that type`,
      })
    }
  })
  return out
}

/** The `__text` companion of a typed column: the text of each cell that does not convert, else NULL. */
export const misfitText = (
  batches: readonly RecordBatch[],
  column: number,
  type: TypedColumnType,
  rows: number,
): ColumnValues => {
  const read = READ[type]
  const out: ColumnValues = new Array(rows)
  eachCell(batches, column, (bytes, start, end, row) => {
    out[row] = start === end || read(bytes, start, end) ? null : textOf(bytes, start, end)
  })
  return out
}

/** A column this CSV lacks. */
export const nullValues = (rows: number): ColumnValues => new Array(rows).fill(null)
