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
  readonly #copies: BatchCopies
  readonly #batches: RecordBatch[] = []
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

  /** Keeps a copy of the batch (its buffers go back to the parser for reuse) and returns it. */
  add(batch: RecordBatch): RecordBatch {
    const copy = this.#copies.copy(batch)
    this.#batches.push(copy)
    this.#rows += batch.rowCount
    return copy
  }

  /** Encodes the row group into the file; returns its bytes. */
  write(file: ParquetFileEncoder): Uint8Array {
    const batches = this.#batches
    const rows = this.#rows
    const { sourceTableId, run, fingerprinter } = this.#lineage
    const firstRow = batches[0]?.firstRow ?? 1
    const builders: (() => ChunkValues)[] = this.#plan.sources.map((source) => {
      if (source.kind === 'absent') return () => nullValues(rows)
      if (source.kind === 'companion') {
        const of = this.#plan.sources.find((s) => s.kind === 'csv' && s.index === source.of)
        if (of?.kind !== 'csv' || of.type === ColumnType.STRING) {
          throw new InternalError({ reason: `companion of column ${source.of} has no typed CSV column` })
        }
        return () => misfitText(batches, of.index, of.type as TypedColumnType, rows)
      }
      if (source.type === ColumnType.STRING) return () => stringValues(batches, source.index, rows)
      const type = source.type as TypedColumnType
      return () => typedValues(batches, source.index, type, rows, source.companion !== undefined)
    })
    builders.push(...lineageValues(firstRow, rows, sourceTableId, run, () => fingerprinter.fingerprints(batches, rows)))
    const bytes = file.writeRowGroup(builders, rows)
    this.#batches.length = 0
    this.#copies.release()
    return bytes
  }
}
