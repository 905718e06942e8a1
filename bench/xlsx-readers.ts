/**
 * `node bench/xlsx-readers.ts WORKBOOK`: the comparison behind the workbook reader's libraries, on one workbook.
 * Each reader runs in a child process of its own (peak RSS from /proc): exceljs' streaming WorkbookReader (rows
 * only), yauzl + saxes (the first sheet's XML events only), and this project's reader (record batches).
 */
import { createReadStream } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { measureChild } from './child.ts'

const [file, mode] = process.argv.slice(2)
if (!file) throw new Error('usage: xlsx-readers.ts WORKBOOK')

const exceljsRows = async (): Promise<number> => {
  const { default: ExcelJS } = await import('exceljs')
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { sharedStrings: 'cache', styles: 'cache' })
  let rows = 0
  for await (const sheet of reader) {
    for await (const _row of sheet) rows++
    break
  }
  return rows
}

const saxesEvents = async (): Promise<number> => {
  const { default: yauzl } = await import('yauzl')
  const { SaxesParser } = await import('saxes')
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false })
  const entry = await new Promise<import('yauzl').Entry>((resolve, reject) => {
    zip.on('entry', (e: import('yauzl').Entry) =>
      e.fileName === 'xl/worksheets/sheet1.xml' ? resolve(e) : zip.readEntry(),
    )
    zip.on('error', reject)
    zip.readEntry()
  })
  const parser = new SaxesParser()
  let rows = 0
  parser.on('opentag', (tag) => {
    if (tag.name === 'row') rows++
  })
  parser.on('text', () => undefined)
  const stream = await zip.openReadStreamPromise(entry)
  stream.setEncoding('utf8')
  for await (const chunk of stream) parser.write(chunk as string)
  parser.close()
  zip.close()
  return rows - 1
}

const ourReader = async (): Promise<number> => {
  const { openWorkbookTable } = await import('../functions/export/xlsx/reader.ts')
  const body = createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>
  const { LimitsConfigSchema } = await import('../functions/export/core/config/schema.ts')
  const limits = LimitsConfigSchema.parse({})
  const table = await openWorkbookTable(body, { tableId: 'bench', spoolDirectory: os.tmpdir(), limits })
  let rows = 0
  for await (const batch of table.batches) {
    rows += batch.rowCount
    table.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
  }
  await table.close()
  return rows
}

const READERS = { exceljs: exceljsRows, 'yauzl+saxes': saxesEvents, 'this reader': ourReader } as const

if (mode !== undefined) {
  const rows = await READERS[mode as keyof typeof READERS]()
  process.stdout.write(`${rows}\n`)
} else {
  for (const name of Object.keys(READERS)) {
    const measured = await measureChild(process.execPath, [
      path.join(import.meta.dirname, 'xlsx-readers.ts'),
      file,
      name,
    ])
    if (measured.exitCode !== 0) throw new Error(`${name} failed:\n${measured.stderr}`)
    process.stdout.write(
      `${name.padEnd(12)} ${measured.stdout.trim().padStart(9)} rows ${measured.seconds.toFixed(1).padStart(6)} s ${(measured.peakRssBytes / 2 ** 20).toFixed(0).padStart(5)} MiB\n`,
    )
  }
}
