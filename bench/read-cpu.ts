/**
 * `npx node bench/read-cpu.ts CSV WORKBOOK [--saxes]`: the CPU each format's reading stage takes for the same rows,
 * on this thread, a figure that survives a busy machine where wall-clock time does not. The CSV stage is the one
 * its parse thread runs (decode, csv-parse, record batches); the workbook's is the one its reading thread runs
 * (zip, parts, shared strings, the worksheet's XML, cells, record batches), with the worksheet read by the byte
 * scanner or, with --saxes, by the saxes reader it replaced (test/support/saxes-sheet.ts). Reports this thread's
 * CPU (`process.threadCpuUsage()`) and the process's (inflating runs on the libuv pool), per row and as a ratio.
 */
import { createReadStream } from 'node:fs'
import { LimitsConfigSchema } from '../functions/export/core/config/schema.ts'
import { parseInline } from '../functions/export/csv/table-parser.ts'
import { DEFAULT_BATCH_LIMITS, type RecordBatch } from '../functions/export/normalize/record-batch.ts'
import { openSheetRows } from '../functions/export/xlsx/sheet.ts'
import { readWorkbookParts } from '../functions/export/xlsx/workbook.ts'
import { openZip } from '../functions/export/xlsx/zip.ts'
import { openSheetRowsWithSaxes } from '../test/support/saxes-sheet.ts'

const [csvFile, workbookFile, flag] = process.argv.slice(2)
if (!csvFile || !workbookFile) throw new Error('usage: read-cpu.ts CSV WORKBOOK [--saxes]')
const limits = LimitsConfigSchema.parse({})

interface Batches {
  readonly batches: AsyncIterable<RecordBatch>
  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void
}

const drain = async (table: Batches): Promise<number> => {
  let rows = 0
  for await (const batch of table.batches) {
    rows += batch.rowCount
    table.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
  }
  return rows
}

const readCsv = async (): Promise<number> =>
  drain(
    await parseInline(createReadStream(csvFile, { highWaterMark: 64 * 1024 }), {
      tableId: 'bench',
      shortRows: 'fail',
      limits,
      encoding: 'utf-8',
      invalidBytes: 'fail',
    }),
  )

const readWorkbook = async (): Promise<number> => {
  const zip = await openZip(workbookFile, 'bench')
  const parts = await readWorkbookParts(zip, 'bench', {}, { maxFieldBytes: limits.maxFieldBytes })
  const open = flag === '--saxes' ? openSheetRowsWithSaxes : openSheetRows
  const sheet = await open(await zip.open(parts.sheetPath), parts, {
    tableId: 'bench',
    batchLimits: DEFAULT_BATCH_LIMITS,
    limits,
  })
  try {
    return await drain(sheet)
  } finally {
    zip.close()
    parts.sharedStrings.close()
  }
}

const measure = async (read: () => Promise<number>) => {
  const thread = process.threadCpuUsage()
  const cpu = process.cpuUsage()
  const rows = await read()
  const threadUsed = process.threadCpuUsage(thread)
  const used = process.cpuUsage(cpu)
  const ms = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
  return { rows, threadMs: Math.round(ms(threadUsed)), processMs: Math.round(ms(used)) }
}

// Warm both paths once, so the figures are not the compiler's.
await readCsv()
await readWorkbook()
const csv = await measure(readCsv)
const workbook = await measure(readWorkbook)
const [load] = (await import('node:os')).loadavg()
process.stdout.write(
  `${JSON.stringify({
    reader: flag === '--saxes' ? 'saxes' : 'scanner',
    load: Number(load!.toFixed(2)),
    csv,
    workbook,
    threadRatio: Number((workbook.threadMs / csv.threadMs).toFixed(2)),
    processRatio: Number((workbook.processMs / csv.processMs).toFixed(2)),
  })}\n`,
)
