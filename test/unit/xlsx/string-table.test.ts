/**
 * The shared-string table past its memory budget: strings spill to the spool disk and read back through block
 * caches exactly as they went in, whatever their length or where a block boundary falls, and leave no file behind.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { openWorkbookTable } from '../../../functions/export/xlsx/reader.ts'
import { byteString } from '../../../functions/export/xlsx/shared-strings.ts'
import { SharedStringTable } from '../../../functions/export/xlsx/string-table.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const folders: string[] = []
const tempFolder = (): string => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'string-table-'))
  folders.push(folder)
  return folder
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

const roundTrip = (strings: readonly string[], memoryBytes: number) => {
  const folder = tempFolder()
  const table = new SharedStringTable({ memoryBytes, spillPath: path.join(folder, 'workbook.xlsx') })
  for (const text of strings) table.add(text)
  table.finish()
  const read = strings.map((_, i) => table.at(i))
  const spilled = table.spilled
  const filesWhileOpen = readdirSync(folder).sort()
  table.close()
  return { read, spilled, filesWhileOpen, filesAfterClose: readdirSync(folder), count: table.count }
}

describe('the shared-string table spills to disk past its memory budget', () => {
  it('reads back every string, including ones across 64 KiB blocks and ones larger than the write buffer', () => {
    const strings = [
      'first',
      '',
      'Zürich 東京 🚀',
      'x'.repeat(65_530),
      'spans the first block boundary',
      'y'.repeat(3 * 1024 * 1024),
      ...Array.from({ length: 20_000 }, (_, i) => `serial-${i}-${'é'.repeat(i % 7)}`),
      'last',
    ]
    const result = roundTrip(strings, 10)
    expect(result.spilled).toBe(true)
    expect(result.count).toBe(strings.length)
    expect(result.read).toEqual(strings.map(byteString))
    expect(result.filesWhileOpen).toEqual(['workbook.xlsx.ends', 'workbook.xlsx.strings'])
    expect(result.filesAfterClose).toEqual([])
  })

  it('gives the same strings in memory and spilled, for any strings and any budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 400 }),
        fc.nat({ max: 2000 }),
        (strings, budget) => {
          const inMemory = roundTrip(strings, Number.MAX_SAFE_INTEGER)
          const spilled = roundTrip(strings, budget)
          expect(inMemory.spilled).toBe(false)
          expect(spilled.read).toEqual(inMemory.read)
          expect(spilled.read).toEqual(strings.map(byteString))
        },
      ),
      { numRuns: 60 },
    )
  })

  it('answers undefined for an index it does not have, spilled or not', () => {
    for (const budget of [0, Number.MAX_SAFE_INTEGER]) {
      const table = new SharedStringTable({ memoryBytes: budget, spillPath: path.join(tempFolder(), 'w.xlsx') })
      table.add('only')
      table.finish()
      expect([table.at(-1), table.at(1), table.at(Number.NaN), table.at(0)]).toEqual([
        undefined,
        undefined,
        undefined,
        'only',
      ])
      table.close()
    }
  })

  it('never returns a byte that was not written, for any index a hostile workbook can name', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { minLength: 1, maxLength: 50 }),
        fc.oneof(
          fc.double(),
          fc.integer({ min: -5, max: 60 }).map((i) => i + 0.5),
          fc.integer({ min: -5, max: 60 }),
        ),
        fc.boolean(),
        (strings, index, spill) => {
          const table = new SharedStringTable({
            memoryBytes: spill ? 0 : Number.MAX_SAFE_INTEGER,
            spillPath: path.join(tempFolder(), 'w.xlsx'),
          })
          for (const text of strings) table.add(text)
          table.finish()
          const read = table.at(index)
          table.close()
          const expected = Number.isInteger(index) ? strings.map(byteString)[index] : undefined
          expect(read).toBe(expected)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('never spills without a spill path', () => {
    const table = new SharedStringTable({ memoryBytes: 0 })
    table.add('a'.repeat(100))
    table.finish()
    expect(table.spilled).toBe(false)
    expect(table.at(0)).toBe('a'.repeat(100))
  })
})

describe('a workbook read with its shared strings on disk', () => {
  it('gives the same rows as one read in memory and removes the spill files on close', async () => {
    const bytes = readFileSync(path.resolve(import.meta.dirname, '../../fixtures/xlsx/devices-xlsxwriter.xlsx'))
    const readAll = async (sharedStringMemoryBytes: number | undefined) => {
      const spoolDirectory = tempFolder()
      async function* body() {
        yield bytes
      }
      const workbook = await openWorkbookTable(body(), {
        tableId: 'wb',
        spoolDirectory,
        sharedStringMemoryBytes,
        limits: DEFAULT_LIMITS,
      })
      const filesWhileOpen = readdirSync(spoolDirectory).filter((name) => name.endsWith('.strings'))
      const rows: string[] = []
      for await (const batch of workbook.batches) {
        rows.push(Buffer.from(batch.bytes).toString('latin1'), Array.from(batch.offsets).join(','))
      }
      await workbook.close()
      return { rows, header: workbook.header, filesWhileOpen, filesAfterClose: readdirSync(spoolDirectory) }
    }
    const inMemory = await readAll(undefined)
    const spilled = await readAll(0)
    expect(inMemory.filesWhileOpen).toEqual([])
    expect(spilled.filesWhileOpen).toHaveLength(1)
    expect(spilled.header).toEqual(inMemory.header)
    expect(spilled.rows).toEqual(inMemory.rows)
    expect(spilled.rows.length).toBeGreaterThan(0)
    expect(spilled.filesAfterClose).toEqual([])
  })
})
