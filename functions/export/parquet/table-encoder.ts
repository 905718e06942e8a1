/**
 * A table's Parquet file from its record batches, in one pass in the common case. Each batch is encoded as it
 * arrives, with the write plan known so far: the registry's schema and the types inferred over every row up to
 * the batch's end (the caller's inferrer, told of each batch before it is pushed here). When a batch changes the
 * plan's layout (a type widened, a `__text` companion appeared), the output restarts, and the file is encoded from
 * the spool once the table ends, under the final plan. Either way the file is exactly what encoding all rows with
 * the final plan gives.
 *
 * The plan is decided here, on the calling thread, where the types are learnt; the file is written by a
 * TableFileWriter (table-file.ts) on this thread, or on a thread of its own when the export has one to give it
 * (encode-thread.ts), so that encoding row groups never holds up the thread that hands batches on.
 */
import type { NamedColumn } from '../normalize/columns.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import type { ColumnTypeInferrer } from '../normalize/types.ts'
import { planWrite, sameFileLayout, type WritePlan } from '../schema/plan.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import { openEncodeThread } from './encode-thread.ts'
import { type EncodedOutput, type FileWriterPort, type TableFileSetup, TableFileWriter } from './table-file.ts'

export type { EncodedOutput, RowGroupLimits } from './table-file.ts'

interface TableEncoderSetup extends TableFileSetup {
  /** The table's name in the warehouse. */
  readonly table: string
  readonly exportDate: string
  readonly columns: readonly NamedColumn[]
  /** What the columns' values fit so far: observed by the caller with each batch before `push`. */
  readonly types: ColumnTypeInferrer
  /** The registry's schema before this export. */
  readonly previous: TableSchema | undefined
  /**
   * Takes back a pushed batch's buffers once the encoder is done with them; without it they are the caller's
   * again as soon as `push` resolves.
   */
  readonly recycle?: ((bytes: ArrayBuffer, offsets: ArrayBuffer) => void) | undefined
  /** Write the file on a thread of its own. @default false */
  readonly thread?: boolean | undefined
}

export interface EncodedTable {
  readonly plan: WritePlan
  readonly rows: number
}

export class TableEncoder {
  readonly #setup: TableEncoderSetup
  readonly #inferrer: ColumnTypeInferrer
  readonly #file: FileWriterPort
  /** The plan the file is being written with, and the inferrer's revision it was made at. */
  #plan: WritePlan | undefined
  #planRevision = -1
  /** Set once the plan's layout has changed: the file is then encoded from the spool when the table ends. */
  #deferred = false

  constructor(setup: TableEncoderSetup, output: EncodedOutput) {
    this.#setup = setup
    this.#inferrer = setup.types
    const file: TableFileSetup = {
      tableId: setup.tableId,
      columns: setup.columns,
      pseudonymized: setup.pseudonymized,
      run: setup.run,
      spoolPath: setup.spoolPath,
      rowGroupLimits: setup.rowGroupLimits,
    }
    this.#file = setup.thread ? openEncodeThread(file, output, setup.recycle) : inline(file, output, setup.recycle)
  }

  /**
   * Takes the next batch, already observed by the setup's `types`, and encodes it. Resolves at once, but when the
   * encoder is behind (a group filled while the one before it is still being written): then once it has caught up.
   */
  async push(batch: RecordBatch): Promise<void> {
    // A plan that changed once may change again: from then on batches are only spooled and the file is encoded
    // once, at the end, so a table whose types keep widening costs at most two encodes, never one per change.
    if (!this.#deferred && (this.#plan === undefined || this.#planRevision !== this.#inferrer.revision)) {
      // The plan depends on the rows only through what their values fit, so it is made again only when that changed.
      const plan = this.#currentPlan()
      this.#planRevision = this.#inferrer.revision
      if (this.#plan !== undefined && !sameFileLayout(plan, this.#plan)) {
        await this.#file.restart()
        this.#deferred = true
      } else this.#plan = plan
    }
    await this.#file.add(batch, this.#plan!)
  }

  /** Writes the last row group and the footer; returns the final plan. */
  async finish(): Promise<EncodedTable> {
    const plan = this.#currentPlan()
    // After a restart the file is written under the final plan; without one it has its layout already.
    const rows = await this.#file.finish(plan)
    return { plan, rows }
  }

  /** Closes the spool file (its owner deletes it) and deletes the row groups' spill files. */
  close(): Promise<void> {
    return this.#file.close()
  }

  /** The plan for the rows seen so far. */
  #currentPlan(): WritePlan {
    const { previous, table, tableId, exportDate, columns } = this.#setup
    return planWrite(previous, {
      table,
      sourceTableId: tableId,
      exportDate,
      columns,
      inferred: this.#inferrer.types(),
      fits: (index, type) => this.#inferrer.fits(index, type),
    })
  }
}

/** The file written on this thread: a batch's buffers are free once its add resolves. */
const inline = (
  setup: TableFileSetup,
  output: EncodedOutput,
  recycle: TableEncoderSetup['recycle'],
): FileWriterPort => {
  const writer = new TableFileWriter(setup, output)
  return {
    add: async (batch, plan) => {
      await writer.add(batch, plan)
      recycle?.(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    },
    restart: () => writer.restart(),
    finish: (plan) => writer.finish(plan),
    close: async () => writer.close(),
  }
}
