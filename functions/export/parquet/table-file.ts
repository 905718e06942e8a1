/**
 * A table's Parquet file from its record batches, under the write plans the caller decides (table-encoder.ts):
 * every batch spooled for a second pass, and, until the plan's layout changes, cut into row groups and encoded as
 * it comes. It runs on the thread that encodes: the calling one, or a thread of its own (encode-thread.ts), so it
 * knows nothing of types or plans beyond the plan each batch comes with.
 *
 * A row group holds exactly `maxRows` rows, or ends at the row that brings its cell text to `maxBytes`, wherever
 * the batches begin and end: the file is the same bytes whichever way the rows were cut into batches (one parse
 * thread, chunks on every core, a workbook).
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { PSEUDONYMIZED_METADATA_KEY } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import { LINEAGE_COLUMNS, type RunIdentity } from '../core/lineage.ts'
import { BatchSpool } from '../normalize/batch-spool.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import { RowFingerprinter } from '../normalize/fingerprint.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import type { WritePlan } from '../schema/plan.ts'
import { GROUP_SPILL_SUFFIXES } from '../scratch/spool-files.ts'
import { BatchCopies, SpillReadBuffers } from './batch-copies.ts'
import { ParquetFileEncoder } from './encode.ts'
import { EXPORT_COLUMNS_METADATA_KEY } from './published-export.ts'
import { type LineageSource, RowGroupEncoder } from './row-group.ts'

export interface RowGroupLimits {
  /** Rows per row group. */
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
export const DEFAULT_ROW_GROUP_LIMITS: RowGroupLimits = { maxRows: 122_880, maxBytes: 32 * 1024 * 1024 }

/** What the file is of: plain data, so that it crosses to the encoding thread as it is. */
export interface TableFileSetup {
  readonly tableId: string
  readonly columns: readonly NamedColumn[]
  /** The columns whose values are pseudonyms, recorded in the footer. @default none */
  readonly pseudonymized?: readonly string[] | undefined
  readonly run: RunIdentity
  /** Temporary file for the spool (the writer creates it; its owner deletes it). */
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

/** What writes the file: a TableFileWriter on the calling thread, or one on a thread of its own. */
export interface FileWriterPort {
  /** Resolves once the batch is taken: its buffers are free then, unless the port hands them back itself. */
  add(batch: RecordBatch, plan: WritePlan): Promise<void>
  restart(): Promise<void>
  finish(plan: WritePlan): Promise<number>
  close(): Promise<void>
}

/** Rows `from` to `to` of `batch`, on its buffers (the offsets say where each cell is in the bytes). */
const rowsOf = (batch: RecordBatch, from: number, to: number): RecordBatch =>
  from === 0 && to === batch.rowCount
    ? batch
    : {
        ...batch,
        firstRow: batch.firstRow + from,
        rowCount: to - from,
        offsets: batch.offsets.subarray(from * batch.columnCount, to * batch.columnCount + 1),
      }

/** Cell text of rows 0 to `rows` of `batch`. */
const textOf = (batch: RecordBatch, rows: number): number =>
  batch.offsets[rows * batch.columnCount]! - batch.offsets[0]!

export class TableFileWriter {
  readonly #setup: TableFileSetup
  readonly #output: EncodedOutput
  readonly #limits: RowGroupLimits
  readonly #spool: BatchSpool
  readonly #lineage: LineageSource
  /**
   * Two sets of copies: the group being filled and the one being written. A group's write hands the event loop
   * back after each column chunk, so the next group's batches come in (and their buffers go back to the parse
   * thread) meanwhile: with one set, the parse thread waited for every group's whole write, a second of the
   * inventory bench table's 4.4 s parse at groups of 122,880 rows.
   */
  readonly #copies: readonly [BatchCopies, BatchCopies]
  readonly #read: SpillReadBuffers
  #filling: 0 | 1 = 0
  /** The last full group's write, running while the next group fills: at most one at a time. */
  #writing: Promise<void> | undefined
  #closed = false
  /** Set by `restart`: batches are only spooled, and the file is encoded from the spool at `finish`. */
  #deferred = false
  #file: ParquetFileEncoder | undefined
  #group: RowGroupEncoder | undefined
  #groupBytes = 0

  constructor(setup: TableFileSetup, output: EncodedOutput) {
    this.#setup = setup
    this.#output = output
    this.#limits = setup.rowGroupLimits ?? DEFAULT_ROW_GROUP_LIMITS
    this.#spool = new BatchSpool(setup.spoolPath)
    const read = SpillReadBuffers.take()
    this.#read = read
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
   * Spools `batch` and, unless the file was restarted, encodes it under `plan` (which starts the file with the
   * first batch). Resolves at once, but when the batch fills a group while the group before it is still being
   * written: then once that write is done. The batch's buffers are free once this resolves.
   */
  async add(batch: RecordBatch, plan: WritePlan): Promise<void> {
    this.#spool.append(batch)
    if (this.#deferred) return
    this.#file ??= this.#newFile(plan)
    await this.#encode(batch, plan)
  }

  /** What was written is void, the group being written included: from now on batches are only spooled. */
  async restart(): Promise<void> {
    await this.#written()
    this.#output.restart()
    this.#deferred = true
    this.#file = undefined
    this.#group = undefined
    this.#copies[this.#filling].release()
    this.#groupBytes = 0
  }

  /** Writes the last row group and the footer, under `plan` (the file's, or the final one after a restart); returns the rows. */
  async finish(plan: WritePlan): Promise<number> {
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
    return this.#file.rowsWritten
  }

  /** Closes the spool file (its owner deletes it) and deletes the row groups' spill files. */
  close(): void {
    // A write still running stops at its next column (it fails, and nobody waits for it any more).
    if (this.#closed) return
    this.#closed = true
    this.#spool.close()
    for (const copies of this.#copies) copies.close()
    this.#read.give()
  }

  /** Adds the batch's rows to the group being filled, closing each group at its limits, mid-batch if need be. */
  async #encode(batch: RecordBatch, plan: WritePlan): Promise<void> {
    const { maxRows, maxBytes } = this.#limits
    for (let from = 0; from < batch.rowCount; ) {
      this.#group ??= new RowGroupEncoder(plan, this.#lineage, this.#copies[this.#filling])
      const rest = rowsOf(batch, from, batch.rowCount)
      // As many rows as the group has room for, and no more than bring its text to the byte limit.
      let take = Math.min(rest.rowCount, maxRows - this.#group.rows)
      const room = maxBytes - this.#groupBytes
      if (textOf(rest, take) >= room) {
        let low = 1
        while (low < take) {
          const middle = (low + take) >>> 1
          if (textOf(rest, middle) >= room) take = middle
          else low = middle + 1
        }
      }
      this.#group.add(rowsOf(rest, 0, take))
      this.#groupBytes += textOf(rest, take)
      from += take
      if (this.#group.rows >= maxRows || this.#groupBytes >= maxBytes) await this.#closeGroup()
    }
  }

  /** Starts writing the group, once the one before it is written; the next group fills the other copies. */
  async #closeGroup(): Promise<void> {
    const group = this.#group
    if (group === undefined) return
    this.#group = undefined
    this.#groupBytes = 0
    await this.#written()
    // Closed meanwhile, its copies may be another table's already (batch-copies.ts).
    if (this.#closed) throw new InternalError({ reason: 'row group write stopped: the table encoder was closed' })
    this.#filling = this.#filling === 0 ? 1 : 0
    const writing = group.write(this.#file!, (bytes) => this.#output.write(bytes), this.#betweenColumns)
    // Its failure is the next add's or finish's to throw; until then nothing awaits it.
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

  #newFile(plan: WritePlan): ParquetFileEncoder {
    const setup = this.#setup
    const columns = [...plan.schema.columns, ...LINEAGE_COLUMNS].map(({ name, type }) => ({ name, type }))
    const file = new ParquetFileEncoder(columns, {
      'inventory.source_table_id': setup.tableId,
      'inventory.export_run_id': setup.run.runId,
      // What a guarded re-export of this date compares with (parquet/published-export.ts).
      [EXPORT_COLUMNS_METADATA_KEY]: JSON.stringify(setup.columns.map(({ name, header }) => ({ name, header }))),
      // What a rewrite of history reads to tell a date whose values are pseudonyms already (path/rewrite.ts).
      [PSEUDONYMIZED_METADATA_KEY]: JSON.stringify(
        setup.columns.map((c) => c.name).filter((name) => setup.pseudonymized?.includes(name)),
      ),
    })
    this.#output.write(file.start())
    return file
  }
}
