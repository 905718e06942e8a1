/**
 * The workbook reader on a thread of its own against the same reader on the calling thread: the same header,
 * rows in sheet order across many batches, the same warnings; the same coded errors with the same messages; the
 * deadline stops it; and the spooled file and the shared strings' spill files are gone after every outcome.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DeadlineError } from '../../../functions/export/core/errors.ts'
import type { RecordBatch } from '../../../functions/export/normalize/record-batch.ts'
import { openWorkbookTable } from '../../../functions/export/xlsx/reader.ts'
import { tempDir } from '../../support/cli.ts'
import { craftedWorkbook, type WorkbookXml } from '../../support/crafted-workbook.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/xlsx')
const STYLES =
  '<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  '<cellXfs><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>'
type Thread = 'inline' | 'worker'
type Limits = typeof DEFAULT_LIMITS

async function* chunks(bytes: Uint8Array, size = 64 * 1024): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield Buffer.from(bytes.subarray(at, at + size))
}

/** Text enough that a batch (1 MiB at most) holds about 2,500 rows: many batches from few rows. */
const FILLER = 'more '.repeat(80)

/**
 * `rows` data rows of four columns (a shared string, a number, a date, an inline string, one of them left out
 * now and then), an error cell every 1,000 rows, and `broken` in place of one row.
 */
const manyRows = (rows: number, broken?: { row: number; xml: string }): WorkbookXml => {
  const strings = ['name', 'count', 'when', 'note', ...Array.from({ length: 5000 }, (_, i) => `host-${i}.example`)]
  const header = [0, 1, 2, 3].map((s, c) => `<c r="${'ABCD'[c]}1" t="s"><v>${s}</v></c>`).join('')
  function* sheetData(): Generator<string> {
    yield `<row r="1">${header}</row>`
    for (let r = 2; r <= rows + 1; r++) {
      if (broken?.row === r) {
        yield broken.xml
        continue
      }
      const count = r % 1000 === 0 ? `<c r="B${r}" t="e"><v>#N/A</v></c>` : `<c r="B${r}"><v>${r * 3}</v></c>`
      const note = r % 7 === 0 ? '' : `<c r="D${r}" t="inlineStr"><is><t>row ${r} &amp; ${FILLER}</t></is></c>`
      yield `<row r="${r}"><c r="A${r}" t="s"><v>${4 + (r % 5000)}</v></c>${count}<c r="C${r}" s="1"><v>${45000 + (r % 900)}</v></c>${note}</row>`
    }
  }
  return { sharedStrings: strings, styles: STYLES, sheetData: sheetData() }
}

const cellsOf = (batch: RecordBatch): string[] => {
  const text = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength)
  return Array.from({ length: batch.rowCount * batch.columnCount }, (_, cell) =>
    text.toString('utf8', batch.offsets[cell], batch.offsets[cell + 1]),
  )
}

interface ReadOptions {
  readonly limits?: Limits
  readonly sharedStringMemoryBytes?: number
  readonly signal?: AbortSignal
  /** Called after each batch: where a test aborts. */
  readonly onBatch?: (index: number) => void
}

/** Reads `bytes` on `thread` in a spool folder of its own; what it read, or its failure, and what it left behind. */
const read = async (bytes: Uint8Array, thread: Thread, options: ReadOptions = {}) => {
  const spoolDirectory = await tempDir('workbook-thread-')
  const cells: string[] = []
  let batches = 0
  let outcome: { header: readonly string[]; sheet: string; warnings: string[] } | undefined
  let failure: unknown
  try {
    const table = await openWorkbookTable(chunks(bytes), {
      tableId: 'wb',
      spoolDirectory,
      limits: options.limits ?? DEFAULT_LIMITS,
      sharedStringMemoryBytes: options.sharedStringMemoryBytes,
      signal: options.signal,
      thread,
    })
    try {
      for await (const batch of table.batches) {
        cells.push(...cellsOf(batch))
        table.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
        options.onBatch?.(batches)
        batches++
      }
      outcome = { header: table.header, sheet: table.sheetName, warnings: table.warnings() }
    } finally {
      await table.close()
    }
  } catch (error) {
    failure = error
  }
  return { outcome, failure, cells, batches, left: await readdir(spoolDirectory) }
}

const bothWays = async (bytes: Uint8Array, options: ReadOptions = {}) => {
  const inline = await read(bytes, 'inline', options)
  const threaded = await read(bytes, 'worker', options)
  return { inline, threaded }
}

describe('a workbook read on a thread of its own', () => {
  it('hands over every row in sheet order across many batches, as the calling thread reads them', async () => {
    const { inline, threaded } = await bothWays(await craftedWorkbook(manyRows(40_000)))
    expect(threaded.failure).toBeUndefined()
    // More batches than may be in flight between the threads, so the buffers went back and forth.
    expect(threaded.batches).toBeGreaterThan(12)
    expect(threaded.outcome).toEqual(inline.outcome)
    expect(threaded.outcome!.header).toEqual(['name', 'count', 'when', 'note'])
    expect(threaded.outcome!.warnings).toEqual([expect.stringMatching(/^40 error cells \(#N\/A\) of worksheet/)])
    expect(threaded.cells.length).toBe(40_000 * 4)
    expect(threaded.cells).toEqual(inline.cells)
    // The rows in order: row r carries r * 3 in its second column (an error cell every 1,000 rows).
    const counts = threaded.cells.filter((_, i) => i % 4 === 1)
    expect(counts.slice(0, 3)).toEqual(['6', '9', '12'])
    expect(counts[39_999]).toBe('120003')
    expect(counts[39_998]).toBe('')
    expect(threaded.left).toEqual([])
  }, 120_000)

  it('reads the fixtures of other writers as the calling thread does', async () => {
    for (const name of ['devices-xlsxwriter.xlsx', 'times-openpyxl-1904.xlsx']) {
      const { inline, threaded } = await bothWays(await readFile(path.join(FIXTURES, name)))
      expect(threaded.failure).toBeUndefined()
      expect({ ...threaded, left: undefined }).toEqual({ ...inline, left: undefined })
    }
  })

  it('removes the shared strings spilled to disk on the thread once the table is closed', async () => {
    const { inline, threaded } = await bothWays(await craftedWorkbook(manyRows(10_000)), {
      sharedStringMemoryBytes: 1024,
    })
    expect(threaded.failure).toBeUndefined()
    expect(threaded.cells).toEqual(inline.cells)
    expect(threaded.left).toEqual([])
  }, 60_000)
})

describe('a workbook that fails on the thread fails as on the calling thread', () => {
  const fixture = (name: string) => readFile(path.join(FIXTURES, name))
  it.each([
    [
      'a workbook cut short',
      async () => (await fixture('devices-xlsxwriter.xlsx')).subarray(0, -300),
      'BODY_TRUNCATED',
    ],
    ['a workbook without a worksheet', () => fixture('no-worksheet.xlsx'), 'XLSX_NO_WORKSHEET'],
    ['a worksheet without a header row', () => fixture('no-header.xlsx'), 'XLSX_NO_HEADER'],
    ['a zip bomb', () => fixture('zip-bomb.xlsx'), 'XLSX_TOO_LARGE'],
    [
      'a shared string the workbook does not have, 25,000 rows in',
      () =>
        craftedWorkbook(
          manyRows(30_000, { row: 25_000, xml: '<row r="25000"><c r="A25000" t="s"><v>9999999</v></c></row>' }),
        ),
      'XLSX_MALFORMED',
    ],
    [
      'a row wider than the header, 25,000 rows in',
      () => craftedWorkbook(manyRows(30_000, { row: 25_000, xml: '<row r="25000"><c r="F25000"><v>1</v></c></row>' })),
      'ROW_FIELD_COUNT',
    ],
  ])(
    '%s: the same coded error, message and fields',
    async (_what, bytes, code) => {
      const { inline, threaded } = await bothWays(await bytes())
      expect(threaded.failure).toBeInstanceOf((inline.failure as object).constructor)
      expect(threaded.failure).toMatchObject({ code })
      expect({ ...(threaded.failure as object) }).toEqual({ ...(inline.failure as object) })
      expect((threaded.failure as Error).message).toBe((inline.failure as Error).message)
      expect(threaded.left).toEqual([])
    },
    60_000,
  )

  it.each([
    [{ maxColumns: 3, maxRecordBytes: 1 << 20, maxFieldBytes: 1 << 20 }],
    [{ maxColumns: 100, maxRecordBytes: 1 << 20, maxFieldBytes: 12 }],
  ])(
    'past the limits %j: the same LIMIT_EXCEEDED',
    async (limits) => {
      const { inline, threaded } = await bothWays(await craftedWorkbook(manyRows(5_000)), { limits })
      expect(threaded.failure).toMatchObject({ code: 'LIMIT_EXCEEDED', message: (inline.failure as Error).message })
      expect(threaded.left).toEqual([])
    },
    60_000,
  )
})

describe('the deadline on the thread', () => {
  it('stops the reading with the deadline, and leaves no spooled file behind', async () => {
    const deadline = new AbortController()
    const reason = new DeadlineError({ tableId: 'wb', reason: 'stopped: the table took longer than allowed' })
    const threaded = await read(await craftedWorkbook(manyRows(60_000)), 'worker', {
      signal: deadline.signal,
      onBatch: (index) => {
        if (index === 2) deadline.abort(reason)
      },
    })
    expect(threaded.failure).toBe(reason)
    // At most the batches already in flight arrive after the deadline, never the rest of the sheet.
    expect(threaded.batches).toBeLessThan(3 + 10)
    expect(threaded.left).toEqual([])
  }, 60_000)
})
