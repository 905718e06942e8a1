/**
 * A table's Parquet file from its record batches, in one pass in the common case. Each batch is encoded as it
 * arrives, with the write plan known so far: the registry's schema and the types inferred over every row up to
 * the batch's end (the caller's inferrer, told of each batch before it is pushed here). When a batch changes the plan (a type widened, a `__text` companion appeared), the output
 * restarts, and the file is encoded from the spool once the table ends, under the final plan. Either way the file
 * is exactly what encoding all rows with the final plan gives.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { PSEUDONYMIZED_METADATA_KEY } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import { LINEAGE_COLUMNS, type RunIdentity } from '../core/lineage.ts'
import { BatchSpool } from '../normalize/batch-spool.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import { RowFingerprinter } from '../normalize/fingerprint.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import type { ColumnTypeInferrer } from '../normalize/types.ts'
import { planWrite, sameFileLayout, type WritePlan } from '../schema/plan.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import { GROUP_SPILL_SUFFIXES } from '../scratch/spool-files.ts'
import { BatchCopies, SpillReadBuffers } from './batch-copies.ts'
import { ParquetFileEncoder } from './encode.ts'
import { EXPORT_COLUMNS_METADATA_KEY } from './published-export.ts'
import { type LineageSource, RowGroupEncoder } from './row-group.ts'

export interface RowGroupLimits {
  /** Rows per row group (a group closes at the first batch that reaches it). */
  readonly maxRows: number
  /** Bytes of cell text per row group: bounds a group's compressed size whatever the width of the table. */
  readonly maxBytes: number
  /** Bytes of a group's copies kept in memory; the rest go to the spill file. @default IN_MEMORY_BYTES */
  readonly inMemoryBytes?: number
}

/**
 * DuckDB's 122,880 rows or 32 MiB of cell text: each group pays its own dictionaries, page headers and statistics,
 * and at 32,768 rows they made columns of a few thousand distinct values 1.3-1.4 x DuckDB's bytes. The group's
 * copies past 1 MiB wait in a spill file (batch-copies.ts), so memory holds one column of the group at a time;
 * the cell text bounds that column whatever the table's width. See docs/architecture.md ("Row groups").
 */
const DEFAULT_ROW_GROUP_LIMITS: RowGroupLimits = { maxRows: 122_880, maxBytes: 32 * 1024 * 1024 }

interface TableEncoderSetup {
  readonly tableId: string
  /** The table's name in the warehouse. */
  readonly table: string
  readonly exportDate: string
  readonly columns: readonly NamedColumn[]
  /** What the columns' values fit so far: observed by the caller with each batch before `push`. */
  readonly types: ColumnTypeInferrer
  /** The registry's schema before this export. */
  readonly previous: TableSchema | undefined
  /** The columns whose values are pseudonyms, recorded in the footer. @default none */
  readonly pseudonymized?: readonly string[] | undefined
  readonly run: RunIdentity
  /** Temporary file for the spool (the encoder creates it; its owner deletes it). */
  readonly spoolPath: string
  /** Smaller groups let tests cross group boundaries with few rows. @default DEFAULT_ROW_GROUP_LIMITS */
  readonly rowGroupLimits?: RowGroupLimits | undefined
}

/** Where the file's bytes go. */
export interface EncodedOutput {
  /** The next bytes of the file. */
  write(bytes: Uint8Array): void
  /** Drops everything written so far: the file starts again from its first byte. */
  restart(): void
  /** Resolves once the bytes written so far are taken in (backpressure). */
  drained(): Promise<void>
}

export interface EncodedTable {
  readonly plan: WritePlan
  readonly rows: number
}

export class TableEncoder {
  readonly #setup: TableEncoderSetup
  readonly #output: EncodedOutput
  readonly #limits: RowGroupLimits
  readonly #inferrer: ColumnTypeInferrer
  readonly #spool: BatchSpool
  readonly #lineage: LineageSource
  /**
   * Two sets of copies: the group being filled and the one being written. A group's write hands the event loop
   * back after each column chunk, so the next group's batches come in (and their buffers go back to the parse
   * thread) meanwhile: with one set, the parse thread waited for every group's whole write, a second of the
   * inventory bench table's 4.4 s parse at groups of 122,880 rows.
   */
  readonly #copies: readonly [BatchCopies, BatchCopies]
  #filling: 0 | 1 = 0
  /** The last full group's write, running while the next group fills: at most one at a time. */
  #writing: Promise<void> | undefined
  #closed = false
  /** The plan the file is being written with, and the inferrer's revision it was made at. */
  #plan: WritePlan | undefined
  #planRevision = -1
  /** Set once the plan has changed: the file is then encoded from the spool when the table ends. */
  #deferred = false
  #file: ParquetFileEncoder | undefined
  #group: RowGroupEncoder | undefined
  #groupBytes = 0

  constructor(setup: TableEncoderSetup, output: EncodedOutput) {
    this.#setup = setup
    this.#output = output
    this.#limits = setup.rowGroupLimits ?? DEFAULT_ROW_GROUP_LIMITS
    this.#inferrer = setup.types
    this.#spool = new BatchSpool(setup.spoolPath)
    const read = new SpillReadBuffers()
    const [first, second] = GROUP_SPILL_SUFFIXES.map(
      (suffix) => new BatchCopies(`${setup.spoolPath}${suffix}`, this.#limits.inMemoryBytes, read),
    )
    this.#copies = [first!, second!]
    this.#lineage = {
      sourceTableId: setup.tableId,
      run: setup.run,
      fingerprinter: new RowFingerprinter(setup.columns.map((c) => c.name)),
    }
  }

  /**
   * Takes the next batch, already observed by the setup's `types`, and encodes it. Resolves at once, but when the
   * batch fills a group while the group before it is still being written: then once that write is done.
   */
  async push(batch: RecordBatch): Promise<void> {
    this.#spool.append(batch)
    // A plan that changed once may change again: from then on batches are only spooled and the file is encoded
    // once, at the end, so a table whose types keep widening costs at most two encodes, never one per change.
    if (this.#deferred) return
    // The plan depends on the rows only through what their values fit, so it is made again only when that changed.
    if (this.#plan === undefined || this.#planRevision !== this.#inferrer.revision) {
      const plan = this.#currentPlan()
      this.#planRevision = this.#inferrer.revision
      if (this.#plan === undefined) {
        this.#file = this.#newFile(plan)
      } else if (!sameFileLayout(plan, this.#plan)) {
        // What was written is void, the group still being written included.
        await this.#written()
        this.#output.restart()
        this.#deferred = true
        this.#file = undefined
        this.#group = undefined
        this.#copies[this.#filling].release()
        this.#groupBytes = 0
        return
      }
      this.#plan = plan
    }
    await this.#encode(batch, this.#plan)
  }

  /** Writes the last row group and the footer; returns the final plan. */
  async finish(): Promise<EncodedTable> {
    const plan = this.#currentPlan()
    if (this.#deferred) {
      this.#file = this.#newFile(plan)
      for (const spooled of this.#spool.batches()) {
        await this.#encode(spooled, plan)
        await this.#output.drained()
      }
    }
    this.#file ??= this.#newFile(plan)
    await this.#closeGroup()
    await this.#written()
    this.#output.write(this.#file.finish())
    return { plan, rows: this.#file.rowsWritten }
  }

  /** Closes the spool file (its owner deletes it) and deletes the row groups' spill file. */
  close(): void {
    // A write still running stops at its next column (it fails, and nobody waits for it any more).
    this.#closed = true
    this.#spool.close()
    for (const copies of this.#copies) copies.close()
  }

  async #encode(batch: RecordBatch, plan: WritePlan): Promise<void> {
    this.#group ??= new RowGroupEncoder(plan, this.#lineage, this.#copies[this.#filling])
    this.#group.add(batch)
    this.#groupBytes += batch.bytes.length
    if (this.#group.rows >= this.#limits.maxRows || this.#groupBytes >= this.#limits.maxBytes) {
      await this.#closeGroup()
    }
  }

  /** Starts writing the group, once the one before it is written; the next group fills the other copies. */
  async #closeGroup(): Promise<void> {
    const group = this.#group
    if (group === undefined) return
    this.#group = undefined
    this.#groupBytes = 0
    await this.#written()
    this.#filling = this.#filling === 0 ? 1 : 0
    const writing = group.write(this.#file!, this.#betweenColumns).then((bytes) => this.#output.write(bytes))
    // Its failure is the next push's or finish's to throw; until then nothing awaits it.
    writing.catch(() => undefined)
    this.#writing = writing
  }

  /** Waits for the last full group's write, and throws what it threw. */
  async #written(): Promise<void> {
    const writing = this.#writing
    this.#writing = undefined
    await writing
  }

  readonly #betweenColumns = async (): Promise<void> => {
    await nextTurn()
    if (this.#closed) throw new InternalError({ reason: 'row group write stopped: the table encoder was closed' })
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

  #newFile(plan: WritePlan): ParquetFileEncoder {
    const columns = [...plan.schema.columns, ...LINEAGE_COLUMNS].map(({ name, type }) => ({ name, type }))
    const file = new ParquetFileEncoder(columns, {
      'inventory.source_table_id': this.#setup.tableId,
      'inventory.export_run_id': this.#setup.run.runId,
      // What a guarded re-export of this date compares with (parquet/published-export.ts).
      [EXPORT_COLUMNS_METADATA_KEY]: JSON.stringify(this.#setup.columns.map(({ name, header }) => ({ name, header }))),
      // What a rewrite of history reads to tell a date whose values are pseudonyms already (path/rewrite.ts).
      [PSEUDONYMIZED_METADATA_KEY]: JSON.stringify(
        this.#setup.columns.map((c) => c.name).filter((name) => this.#setup.pseudonymized?.includes(name)),
      ),
    })
    this.#output.write(file.start())
    return file
  }
}
