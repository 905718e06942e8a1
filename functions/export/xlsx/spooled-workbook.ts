/**
 * A spooled workbook's CPU work: zip -> the workbook's parts (shared strings included) -> the table's worksheet's
 * rows as record batches. Runs where reader.ts puts it, on the calling thread or on a thread of its own
 * (workbook-thread.ts); either way it only reads the spooled file, which reader.ts owns and deletes.
 */
import type { RecordLimits } from '../csv/record-guard.ts'
import { DEFAULT_BATCH_LIMITS } from '../normalize/record-batch.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { openSheetRows } from './sheet.ts'
import { readWorkbookParts, type WorkbookParts } from './workbook.ts'
import { openZip, type ZipArchive } from './zip.ts'

export interface SpooledWorkbookOptions {
  readonly tableId: string
  /** The `limits` section, applied to the worksheet's rows and cells. */
  readonly limits: RecordLimits
  /** Shared-string text held in memory before it spills beside the spooled body. @default DEFAULT_MEMORY_BYTES */
  readonly sharedStringMemoryBytes?: number | undefined
  /** Stops reading the spooled workbook, part by part and chunk by chunk (the table's deadline). */
  readonly signal?: AbortSignal | undefined
  /** The worksheet to read (`tables[].sheet`); default the first visible one. */
  readonly sheet?: string | undefined
}

export interface WorkbookRecords extends TableRecords {
  /** The worksheet read: the one named, else the first visible one in workbook order. */
  readonly sheetName: string
  /** Warnings for the run record (error cells exported as NULL), complete once the batches have ended. */
  warnings(): string[]
}

/** The spill files the shared strings may make beside the spooled `file` (string-table.ts names them). */
export const sharedStringSpillFiles = (file: string): string[] => [`${file}.strings`, `${file}.ends`]

/** Reads the spooled workbook `file` up to its header row; the batches then stream the rest of the sheet. */
export const readSpooledWorkbook = async (file: string, options: SpooledWorkbookOptions): Promise<WorkbookRecords> => {
  const { tableId, limits, signal } = options
  let zip: ZipArchive | undefined
  let parts: WorkbookParts | undefined
  const release = () => {
    zip?.close()
    zip = undefined
    parts?.sharedStrings.close()
  }
  try {
    zip = await openZip(file, tableId)
    signal?.throwIfAborted()
    const workbook = await readWorkbookParts(
      zip,
      tableId,
      { spillPath: file, memoryBytes: options.sharedStringMemoryBytes },
      { maxFieldBytes: limits.maxFieldBytes, signal, sheet: options.sheet },
    )
    parts = workbook
    const rows = await openSheetRows(await zip.open(workbook.sheetPath), workbook, {
      tableId,
      batchLimits: DEFAULT_BATCH_LIMITS,
      limits,
      signal,
    })
    return {
      header: rows.header,
      batches: rows.batches,
      recycle: rows.recycle,
      sheetName: workbook.sheetName,
      warnings: () => {
        const { count, values } = rows.errorCells
        if (count === 0) return []
        return [
          `${count.toLocaleString('en-US')} error cell${count === 1 ? '' : 's'} (${[...values].join(', ')}) of worksheet "${workbook.sheetName}" exported as NULL`,
        ]
      },
      close: async () => {
        await rows.batches.return(undefined)
        release()
      },
    }
  } catch (error) {
    release()
    throw error
  }
}
