/**
 * The workbook's zip entries as the reader gets them: inflated whole and exact, in chunks larger than zlib's
 * default, and refused, as yauzl refused them, when they inflate to more or fewer bytes than the directory says.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INFLATE_CHUNK_BYTES, openZip, zipError } from '../../../functions/export/xlsx/zip.ts'
import { craftedWorkbook } from '../../support/crafted-workbook.ts'

const SHEET = 'xl/worksheets/sheet1.xml'
/** Rows of distinct cells: about 3 MB of XML that deflates poorly enough to take many chunks. */
const ROWS = 40_000

let folder: string
let workbook: Buffer

const sheetData = (): string => {
  const rows: string[] = []
  for (let r = 1; r <= ROWS; r++) rows.push(`<row r="${r}"><c r="A${r}"><v>${(r * 7919) % 100_003}</v></c></row>`)
  return rows.join('')
}

const readEntry = async (file: string, name: string) => {
  const zip = await openZip(file, 'zipped')
  try {
    const chunks: Buffer[] = []
    for await (const chunk of await zip.open(name)) chunks.push(chunk as Buffer)
    return chunks
  } catch (error) {
    // As the XML readers do (xml.ts): a failure while inflating gets its code there.
    throw zipError(error, 'zipped')
  } finally {
    zip.close()
  }
}

const failureOf = async (read: Promise<unknown>) => {
  try {
    await read
  } catch (error) {
    return error as { code: string; message: string }
  }
  throw new Error('the entry was read')
}

/** The workbook with the central directory's inflated size of `name` changed by `delta` bytes. */
const withDeclaredSize = async (name: string, delta: number): Promise<string> => {
  const bytes = Buffer.from(workbook)
  for (let at = bytes.lastIndexOf(Buffer.from('PK\x01\x02', 'latin1')); at >= 0; ) {
    const nameLength = bytes.readUInt16LE(at + 28)
    if (bytes.toString('latin1', at + 46, at + 46 + nameLength) === name) {
      bytes.writeUInt32LE(bytes.readUInt32LE(at + 24) + delta, at + 24)
      const file = path.join(folder, `declared-${delta}.xlsx`)
      await writeFile(file, bytes)
      return file
    }
    at = bytes.lastIndexOf(Buffer.from('PK\x01\x02', 'latin1'), at - 1)
  }
  throw new Error(`no ${name} in the directory`)
}

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'zip-test-'))
  workbook = await craftedWorkbook({ sheetData: sheetData() })
  await writeFile(path.join(folder, 'workbook.xlsx'), workbook)
})

afterAll(async () => {
  await rm(folder, { recursive: true, force: true })
})

describe('zip entries', () => {
  it('inflates a large entry to exactly the XML written, in chunks of up to the inflate chunk size', async () => {
    const chunks = await readEntry(path.join(folder, 'workbook.xlsx'), SHEET)
    const xml = Buffer.concat(chunks).toString('utf8')
    expect(xml).toContain(sheetData())
    expect(xml.endsWith('</sheetData></worksheet>')).toBe(true)
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(INFLATE_CHUNK_BYTES)
    expect(chunks.length).toBeLessThan(Math.ceil(xml.length / (16 * 1024)))
  })

  it('reads a small entry whole', async () => {
    const chunks = await readEntry(path.join(folder, 'workbook.xlsx'), 'xl/workbook.xml')
    expect(Buffer.concat(chunks).toString('utf8')).toContain('<sheet name="Sheet1"')
  })

  it('refuses an entry that inflates past the size the directory declares, as soon as it does', async () => {
    const file = await withDeclaredSize(SHEET, -1000)
    const failure = await failureOf(readEntry(file, SHEET))
    expect(failure.code).toBe('XLSX_MALFORMED')
    expect(failure.message).toMatch(/too many bytes in the stream/)
  })

  it('refuses an entry that inflates to fewer bytes than the directory declares', async () => {
    const file = await withDeclaredSize(SHEET, 1000)
    const failure = await failureOf(readEntry(file, SHEET))
    expect(failure.code).toBe('XLSX_MALFORMED')
    expect(failure.message).toMatch(/not enough bytes in the stream/)
  })

  it('refuses an entry whose deflated bytes are corrupt', async () => {
    const bytes = Buffer.from(workbook)
    const local = bytes.indexOf(Buffer.from(SHEET, 'latin1'))
    bytes.fill(0xff, local + SHEET.length + 100, local + SHEET.length + 400)
    const file = path.join(folder, 'corrupt.xlsx')
    await writeFile(file, bytes)
    const failure = await failureOf(readEntry(file, SHEET))
    expect(failure.code).toBe('XLSX_MALFORMED')
  })
})
