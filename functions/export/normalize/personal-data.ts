/**
 * Personal-data controls on the record batches, right after the columns are named and before anything reads a
 * value (type inference, fingerprints, keys, statistics, the spool): dropped columns leave the batches, and each
 * non-empty cell of a pseudonymized column becomes the first 32 lowercase hex digits of
 * HMAC-SHA256(key, the cell's UTF-8 bytes as decoded). So every later stage sees only what may be written, and the
 * row fingerprint is computed over pseudonyms, never over the raw values.
 */
import { createHmac } from 'node:crypto'
import type { ColumnControls } from '../core/column-controls.ts'
import { type ColumnType, ColumnType as Types } from '../core/constants.ts'
import { ConfigError, ControlledColumnError } from '../core/errors.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { NamedColumn } from './columns.ts'
import type { RecordBatch } from './record-batch.ts'
import type { TableRecords } from './table-records.ts'

/** Hex digits of a pseudonym: 128 bits, so two values share one about once in 2^64 pairs. */
const PSEUDONYM_LENGTH = 32

/** The pseudonym of one cell's UTF-8 bytes. */
export const pseudonym = (key: PseudonymizationKey, cell: Uint8Array): string =>
  createHmac('sha256', key.hmacKey).update(cell).digest('hex').slice(0, PSEUDONYM_LENGTH)

/** What a key check digests: the same text everywhere, so the check names the key and nothing else. */
const KEY_CHECK_TEXT = 'inventory-export history event key check'

/**
 * The digest that proves digests were made with a key (a history event's, an erasure request's), without saying
 * anything of it: two keys give the same check about once in 2^128.
 */
export const keyCheck = (key: PseudonymizationKey): string => pseudonym(key, Buffer.from(KEY_CHECK_TEXT))

/** The columns a table writes once its controls are applied. */
interface ControlledColumns {
  /** The written columns, in the export's order. */
  readonly columns: readonly NamedColumn[]
  /** Per written column: its position in the export. */
  readonly sourceIndices: readonly number[]
  /** Per written column: whether its values are pseudonymized. */
  readonly pseudonymized: readonly boolean[]
  /** `columnTypes` with `string` for every pseudonymized column (a pseudonym could look like a number). */
  readonly forced: Readonly<Record<string, ColumnType>>
  /** Whether any column is dropped or pseudonymized (else the batches pass through as they are). */
  readonly active: boolean
}

/** Applies `controls` to the named columns; fails when they name a column the export does not have. */
export const controlColumns = (
  tableId: string,
  controls: ColumnControls,
  named: readonly NamedColumn[],
  columnTypes: Readonly<Record<string, ColumnType>> = {},
): ControlledColumns => {
  const names = named.map((c) => c.name)
  const missing = [
    ...controls.drop.filter((name) => !names.includes(name)).map((name) => ({ list: 'drop', name })),
    ...controls.pseudonymize.filter((name) => !names.includes(name)).map((name) => ({ list: 'pseudonymize', name })),
  ]
  // Only the names that remain are listed: a dropped column's name is no secret, but it is not exported either.
  if (missing.length > 0) throw new ControlledColumnError(tableId, missing, names)
  const kept = named.flatMap((column, index) => (controls.drop.includes(column.name) ? [] : [{ column, index }]))
  const pseudonymized = kept.map(({ column }) => controls.pseudonymize.includes(column.name))
  const forced = { ...columnTypes }
  for (const name of controls.pseudonymize) forced[name] = Types.STRING
  return {
    columns: kept.map((k) => k.column),
    sourceIndices: kept.map((k) => k.index),
    pseudonymized,
    forced,
    active: controls.drop.length + controls.pseudonymize.length > 0,
  }
}

/** Distinct cells whose pseudonyms are remembered: owners and e-mails repeat, and an HMAC costs microseconds. */
const MEMO_SIZE = 1 << 16

/**
 * The records with the controls applied. `key` may only be absent when nothing is pseudonymized, or for `check`,
 * which reads no value of a pseudonymized column (`forPreview`): there the raw cells pass through, in memory only.
 */
export const controlRecords = (
  records: TableRecords,
  controlled: ControlledColumns,
  key: PseudonymizationKey | undefined,
  { forPreview = false }: { forPreview?: boolean } = {},
): TableRecords => {
  if (!controlled.active) return records
  if (key === undefined && !forPreview && controlled.pseudonymized.includes(true)) {
    throw new ConfigError('pseudonymization key', [
      { field: 'pseudonymization key', message: 'is not set, and the table pseudonymizes columns' },
    ])
  }
  const memo = new Map<string, string>()
  const pseudonymOf = (cell: Uint8Array): string => {
    const text = Buffer.from(cell.buffer, cell.byteOffset, cell.byteLength).toString('latin1')
    let value = memo.get(text)
    if (value === undefined) {
      if (memo.size >= MEMO_SIZE) memo.clear()
      value = pseudonym(key!, cell)
      memo.set(text, value)
    }
    return value
  }
  const project = (batch: RecordBatch): RecordBatch =>
    projectBatch(batch, controlled, key === undefined ? undefined : pseudonymOf)
  return {
    header: controlled.columns.map((c) => c.header),
    batches: mapBatches(records, project),
    // The projected batches have buffers of their own; the source's go back as soon as they are copied.
    recycle: () => undefined,
    close: () => records.close(),
  }
}

async function* mapBatches(
  records: TableRecords,
  project: (batch: RecordBatch) => RecordBatch,
): AsyncGenerator<RecordBatch> {
  for await (const batch of records.batches) {
    const projected = project(batch)
    records.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    yield projected
  }
}

/** One batch with only the kept columns, pseudonymized ones replaced (or kept raw when `pseudonymOf` is absent). */
const projectBatch = (
  batch: RecordBatch,
  { sourceIndices, pseudonymized }: ControlledColumns,
  pseudonymOf: ((cell: Uint8Array) => string) | undefined,
): RecordBatch => {
  const { rowCount, columnCount, bytes, offsets } = batch
  const width = sourceIndices.length
  let size = 0
  for (let r = 0; r < rowCount; r++) {
    for (let k = 0; k < width; k++) {
      const cell = r * columnCount + sourceIndices[k]!
      const length = offsets[cell + 1]! - offsets[cell]!
      size += pseudonymized[k] && pseudonymOf && length > 0 ? PSEUDONYM_LENGTH : length
    }
  }
  const out = Buffer.allocUnsafeSlow(Math.max(size, 1))
  const outOffsets = new Int32Array(rowCount * width + 1)
  let at = 0
  let written = 0
  for (let r = 0; r < rowCount; r++) {
    for (let k = 0; k < width; k++) {
      const cell = r * columnCount + sourceIndices[k]!
      const start = offsets[cell]!
      const end = offsets[cell + 1]!
      if (end > start) {
        if (pseudonymized[k] && pseudonymOf) at += out.write(pseudonymOf(bytes.subarray(start, end)), at, 'latin1')
        else {
          out.set(bytes.subarray(start, end), at)
          at += end - start
        }
      }
      outOffsets[++written] = at
    }
  }
  return {
    firstRow: batch.firstRow,
    rowCount,
    columnCount: width,
    bytes: new Uint8Array(out.buffer, out.byteOffset, at),
    offsets: outOffsets,
  }
}
