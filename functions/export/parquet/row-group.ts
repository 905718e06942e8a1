/**
 * One row group: its batches are kept as they came (two compact buffers each), and each column's values are made
 * only when the writer reaches that column, so a group holds the PLAIN values of one column at a time.
 * Each registry column takes its values from its source under the write plan: a CSV column converted to the
 * planned type, its misfits as the `__text` companion, or NULL when this CSV lacks it; then the lineage columns.
 */
import { ColumnType } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import type { RunIdentity } from '../core/lineage.ts'
import type { RowFingerprinter } from '../normalize/fingerprint.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import type { WritePlan } from '../schema/plan.ts'
import type { BatchCopies } from './batch-copies.ts'
import {
  type ChunkValues,
  misfitText,
  nullValues,
  stringValues,
  type TypedColumnType,
  typedValues,
} from './chunk-values.ts'
import type { ParquetFileEncoder } from './encode.ts'
import { lineageValues } from './lineage-values.ts'

export interface LineageSource {
  readonly sourceTableId: string
  readonly run: RunIdentity
  readonly fingerprinter: RowFingerprinter
}

export class RowGroupEncoder {
  readonly #plan: WritePlan
  readonly #lineage: LineageSource
  /** The group's copies, column by column: `column(c)` gives column c of each batch as a one-column batch. */
  readonly #copies: BatchCopies
  #firstRow = 1
  #rows = 0

  /** `copies` holds the group's batches; the group releases it once written. */
  constructor(plan: WritePlan, lineage: LineageSource, copies: BatchCopies) {
    this.#plan = plan
    this.#lineage = lineage
    this.#copies = copies
  }

  get rows(): number {
    return this.#rows
  }

  /** Keeps a copy of the batch (its buffers go back to the parser for reuse) and fingerprints its rows. */
  add(batch: RecordBatch): void {
    this.#copies.add(batch)
    if (this.#rows === 0) this.#firstRow = batch.firstRow
    const rows = this.#rows + batch.rowCount
    // Made now, while the batch's bytes are still in the cache, rather than in a pass over the whole group.
    this.#lineage.fingerprinter.fingerprintInto(batch, this.#copies.fingerprints(rows), this.#rows)
    this.#rows = rows
  }

  /**
   * Encodes the row group into the file, awaiting `betweenColumns` after each chunk; each chunk's bytes go to
   * `emit` as soon as it is written (encode.ts).
   */
  async write(
    file: ParquetFileEncoder,
    emit: (bytes: Uint8Array) => void,
    betweenColumns?: () => Promise<void>,
  ): Promise<void> {
    const rows = this.#rows
    const { sourceTableId, run } = this.#lineage
    // Every batch has every column of the header, so only a group without batches lacks one. Read when the
    // column's chunk is made: copies read back from the spill file are valid until the next column is read.
    const column = (index: number): readonly RecordBatch[] => this.#copies.column(index)
    const builders: (() => ChunkValues)[] = this.#plan.sources.map((source) => {
      if (source.kind === 'absent') return () => nullValues(rows)
      if (source.kind === 'companion') {
        const of = this.#plan.sources.find((s) => s.kind === 'csv' && s.index === source.of)
        if (of?.kind !== 'csv' || of.type === ColumnType.STRING) {
          throw new InternalError({ reason: `companion of column ${source.of} has no typed CSV column` })
        }
        return () => misfitText(column(of.index), 0, of.type as TypedColumnType, rows)
      }
      if (source.type === ColumnType.STRING) return () => stringValues(column(source.index), 0, rows)
      const type = source.type as TypedColumnType
      return () => typedValues(column(source.index), 0, type, rows, source.companion !== undefined)
    })
    const fingerprints = this.#copies.fingerprints(rows).subarray(0, rows)
    builders.push(...lineageValues(this.#firstRow, rows, sourceTableId, run, () => fingerprints))
    await file.writeRowGroup(builders, rows, betweenColumns, emit)
    this.#copies.release()
  }
}
