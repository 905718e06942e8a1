/**
 * The whole read stage of a workbook: body bytes -> spooled file -> zip -> the table's worksheet's rows as record
 * batches, the same batches the CSV parser makes, so everything after this is the CSV's path. The body is spooled
 * here (a zip's directory is at its end); the reading, all CPU (inflate, XML, shared strings, cells, batches),
 * runs on a thread of its own when the edge grants parsing one (core/parse-threads.ts), as the CSV's parse
 * does, unless the workbook is too small for a thread to pay; on this thread otherwise. This module owns the spooled file and its spill files: it names them, and
 * it deletes them on every outcome, after the reading (on either thread) has closed or been stopped.
 */

import { rm } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { parseThreadCount } from '../core/parse-threads.ts'
import type { ParseThread } from '../csv/parse-worker.ts'
import type { RecordLimits } from '../csv/record-guard.ts'
import { newSpoolFile, SpoolKind } from '../scratch/spool-files.ts'
import { checkWorkbookStart, spoolBody } from './spool.ts'
import { readSpooledWorkbook, sharedStringSpillFiles, type WorkbookRecords } from './spooled-workbook.ts'
import { readOnThread } from './workbook-thread.ts'

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
  /** The worksheet to read (`tables[].sheet`); default the first visible one. */
  readonly sheet?: string | undefined
  /** Where the reading runs: 'auto' on a thread when `threads` grants one and it pays; or forced. @default 'auto' */
  readonly thread?: ParseThread | undefined
  /** Threads parsing may use (core/parse-threads.ts); default: as many as this process's cores pay for. */
  readonly threads?: number | undefined
}

/**
 * A spooled workbook smaller than this is read here: starting the thread (loading the reader's modules on it, a
 * few hundred milliseconds of CPU from source) would cost more than reading it (docs/performance.md, "Workbooks").
 */
const THREAD_THRESHOLD = 1024 * 1024

export const openWorkbookTable = async (
  source: AsyncIterable<Buffer>,
  options: WorkbookReadOptions,
): Promise<WorkbookRecords> => {
  const { tableId, signal, thread = 'auto' } = options
  const file = await newSpoolFile(options.spoolDirectory, SpoolKind.workbook)
  const remove = async () => {
    await Promise.all([file, ...sharedStringSpillFiles(file)].map((f) => rm(f, { force: true })))
  }
  let records: WorkbookRecords
  try {
    const bytes = await spoolBody(source, file)
    await checkWorkbookStart(file, bytes, tableId)
    signal?.throwIfAborted()
    const threads = options.threads ?? parseThreadCount(availableParallelism())
    const onThread = thread === 'auto' ? threads > 0 && bytes >= THREAD_THRESHOLD : thread !== 'inline'
    const { limits, sharedStringMemoryBytes, sheet } = options
    const read = { tableId, limits, sharedStringMemoryBytes, signal, sheet }
    records = await (onThread ? readOnThread : readSpooledWorkbook)(file, read)
  } catch (error) {
    await remove()
    throw error
  }
  let closed: Promise<void> | undefined
  return {
    ...records,
    close: () => {
      closed ??= records.close().finally(remove)
      return closed
    },
  }
}
