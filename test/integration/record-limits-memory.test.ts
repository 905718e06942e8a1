/**
 * Limits, not the input, bound memory: the real runner (a child process, the memory probe preloaded) against
 * hostile tables served from another process. Each fails the table with LIMIT_EXCEEDED naming the limit, and the
 * process's peak resident memory (every thread together) stays under 400 MB, whatever the size of the record.
 */
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../support/cli.ts'
import { fillerText, writeCraftedWorkbook } from '../support/crafted-workbook.ts'
import { exportWithProbe } from '../support/memory-probe.ts'

const MiB = 2 ** 20
const PEAK_RSS_LIMIT = 400 * 1000 * 1000

const folders: string[] = []
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true })
})

/** Writes `head`, then `fill` repeated to `fillMiB` MiB, then `tail`, without holding the file in memory. */
const writeCsv = async (head: string, fill: string, fillMiB: number, tail: string): Promise<string> => {
  const folder = await tempDir('inventory-limits-')
  folders.push(folder)
  const file = path.join(folder, 'table.csv')
  const out = createWriteStream(file)
  out.write(head)
  const block = fill.repeat(MiB / fill.length)
  for (let i = 0; i < fillMiB; i++) if (!out.write(block)) await once(out, 'drain')
  out.end(tail)
  await once(out, 'finish')
  return file
}

describe('a hostile table fails on a limit in bounded memory', () => {
  it.each([
    ['a header of 1 MB of commas', () => writeCsv('a', ',', 1, '\n1\n'), 'maxColumns'],
    ['a header of 10 MB of commas', () => writeCsv('a', ',', 10, '\n1\n'), 'maxColumns'],
    ['a row of 100 MB of commas', () => writeCsv('a,b\n1,2\n', ',', 100, '\n3,4\n'), 'maxColumns'],
    ['a field of 300 MB', () => writeCsv('a,b\n1,"', 'x', 300, '"\n3,4\n'), 'maxFieldBytes'],
  ])(
    '%s',
    async (_, write, limit) => {
      const figures = await exportWithProbe(await write(), [], 'bench=hostile')
      expect(figures.exitCode).toBe(1)
      expect(figures.stdout).toMatch(/hostile\s+FAILED LIMIT_EXCEEDED/)
      expect(figures.stderr).toContain(`limits.${limit}`)
      expect(figures.peakRssBytes).toBeLessThan(PEAK_RSS_LIMIT)
    },
    300_000,
  )
})

describe('a hostile workbook fails on a limit in bounded memory', () => {
  // The workbook is about 7 MB: the cell's text deflates some 60 times, under the zip-bomb ratio.
  it.each([
    ['an inline string', '<c r="A2" t="inlineStr"><is><t>', '</t></is></c>'],
    ['a value', '<c r="A2" t="str"><v>', '</v></c>'],
  ])(
    'a cell of 400 MB in %s',
    async (_, open, close) => {
      const folder = await tempDir('inventory-limits-xlsx-')
      folders.push(folder)
      const file = path.join(folder, 'cell.xlsx')
      const sheetData = (function* () {
        yield `<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2">${open}`
        yield* fillerText(400 * MiB)
        yield `${close}</row>`
      })()
      await writeCraftedWorkbook(file, { sheetData })
      const csv = await writeCsv('a\n', 'x', 0, '1\n')
      const figures = await exportWithProbe(csv, [], 'bench=hostile', { file })
      expect(figures.exitCode).toBe(1)
      expect(figures.stdout).toMatch(/hostile\s+FAILED LIMIT_EXCEEDED/)
      expect(figures.stderr).toContain('limits.maxFieldBytes')
      expect(figures.peakRssBytes).toBeLessThan(PEAK_RSS_LIMIT)
    },
    300_000,
  )
})
