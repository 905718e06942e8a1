/**
 * The whole read stage of a workbook: body bytes -> spooled file -> zip -> the first worksheet's rows as record
 * batches, the same batches the CSV parser makes, so everything after this is the CSV's path. Runs on this thread:
 * the inflating and XML parsing are cheaper per row than csv-parse's strings (see docs/performance.md, "Workbooks").
 */
import { rm } from 'node:fs/promises'
import type { RecordLimits } from '../csv/record-guard.ts'
import { DEFAULT_BATCH_LIMITS } from '../normalize/record-batch.ts'
import type { TableRecords } from '../normalize/table-records.ts'
import { newSpoolFile, SpoolKind } from '../scratch/spool-files.ts'
import { openSheetRows } from './sheet.ts'
import { checkWorkbookStart, spoolBody } from './spool.ts'
import { readWorkbookParts, type WorkbookParts } from './workbook.ts'
import { openZip, type ZipArchive } from './zip.ts'

interface WorkbookReadOptions {
  readonly tableId: string
  /** Folder for the spooled body (the Lambda's /tmp, or the OS temp folder). */
  readonly spoolDirectory: string
  /** The `limits` section, applied to the worksheet's rows and cells. */
  readonly limits: RecordLimits
  /** Shared-string text held in memory before it spills beside the spooled body. @default DEFAULT_MEMORY_BYTES */
  readonly sharedStringMemoryBytes?: number | undefined
  /** Stops reading the spooled workbook, part by part and chunk by chunk (the table's deadline). */
  readonly signal?: AbortSignal | undefined
}

interface WorkbookTable extends TableRecords {
  /** The worksheet read: the first in workbook order. */
  readonly sheetName: string
  /** Warnings for the run record (error cells exported as NULL), complete once the batches have ended. */
  warnings(): string[]
}

export const openWorkbookTable = async (
  source: AsyncIterable<Buffer>,
  options: WorkbookReadOptions,
): Promise<WorkbookTable> => {
  const { tableId, signal } = options
  const { limits } = options
  const file = await newSpoolFile(options.spoolDirectory, SpoolKind.workbook)
  let zip: ZipArchive | undefined
  let parts: WorkbookParts | undefined
  const close = async () => {
    zip?.close()
    zip = undefined
    parts?.sharedStrings.close()
    await rm(file, { force: true })
  }
  try {
    const bytes = await spoolBody(source, file)
    await checkWorkbookStart(file, bytes, tableId)
    zip = await openZip(file, tableId)
    signal?.throwIfAborted()
    const workbook = await readWorkbookParts(
      zip,
      tableId,
      { spillPath: file, memoryBytes: options.sharedStringMemoryBytes },
      { maxFieldBytes: limits.maxFieldBytes, signal },
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
        await close()
      },
    }
  } catch (error) {
    await close()
    throw error
  }
}
