/**
 * A fast, minimal SpreadsheetML writer for large benchmark and memory-test workbooks: the stand-in's typed cells
 * (emulator/xlsx.ts `typedCell`) with shared strings and number formats, zipped with node:zlib. exceljs writes
 * the same workbook about ten times slower, which would make a 300,000-row test spend its time generating input.
 * Not a general writer: one sheet, and every string is kept in memory until the shared-strings part is written.
 */
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import { crc32, createDeflateRaw } from 'node:zlib'
import type { Row } from '../emulator/tables.ts'
import { typedCell } from '../emulator/xlsx.ts'

const MS_PER_DAY = 86_400_000
const EPOCH_1900 = 25_569
const CHUNK_CHARS = 256 * 1024

const escapeXml = (text: string): string =>
  text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)

const columnName = (index: number): string => {
  let name = ''
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name
  return name
}

interface CentralEntry {
  readonly name: Buffer
  readonly offset: number
  crc: number
  compressed: number
  size: number
}

/** A zip written front to back: each entry deflated as it streams, sizes in a data descriptor and the directory. */
export class ZipWriter {
  readonly #out: WriteStream
  readonly #entries: CentralEntry[] = []
  #offset = 0

  constructor(file: string) {
    this.#out = createWriteStream(file)
  }

  async #write(bytes: Buffer): Promise<void> {
    this.#offset += bytes.length
    if (!this.#out.write(bytes)) await once(this.#out, 'drain')
  }

  async entry(name: string, parts: AsyncIterable<string> | Iterable<string>): Promise<void> {
    const entry: CentralEntry = { name: Buffer.from(name), offset: this.#offset, crc: 0, compressed: 0, size: 0 }
    const header = Buffer.alloc(30)
    header.writeUInt32LE(0x04034b50, 0)
    header.writeUInt16LE(20, 4)
    header.writeUInt16LE(0x0808, 6) // data descriptor follows; names are UTF-8
    header.writeUInt16LE(8, 8) // deflate
    header.writeUInt16LE(entry.name.length, 26)
    await this.#write(Buffer.concat([header, entry.name]))
    const deflate = createDeflateRaw({ level: 6 })
    const drained = (async () => {
      for await (const chunk of deflate) {
        entry.compressed += (chunk as Buffer).length
        await this.#write(chunk as Buffer)
      }
    })()
    // Parts are gathered to CHUNK_CHARS before they go to zlib: each write is a round trip to zlib's thread, and a
    // part a row (crafted workbooks) or a string (the shared strings) made writing 300,000 rows take a minute.
    let pending = ''
    const flush = async () => {
      const bytes = Buffer.from(pending, 'utf8')
      pending = ''
      entry.crc = crc32(bytes, entry.crc)
      entry.size += bytes.length
      if (!deflate.write(bytes)) await once(deflate, 'drain')
    }
    for await (const part of parts) {
      pending += part
      if (pending.length >= CHUNK_CHARS) await flush()
    }
    if (pending.length > 0) await flush()
    deflate.end()
    await drained
    const descriptor = Buffer.alloc(16)
    descriptor.writeUInt32LE(0x08074b50, 0)
    descriptor.writeUInt32LE(entry.crc, 4)
    descriptor.writeUInt32LE(entry.compressed, 8)
    descriptor.writeUInt32LE(entry.size, 12)
    await this.#write(descriptor)
    this.#entries.push(entry)
  }

  async close(): Promise<void> {
    const start = this.#offset
    for (const entry of this.#entries) {
      const header = Buffer.alloc(46)
      header.writeUInt32LE(0x02014b50, 0)
      header.writeUInt16LE(20, 4)
      header.writeUInt16LE(20, 6)
      header.writeUInt16LE(0x0808, 8)
      header.writeUInt16LE(8, 10)
      header.writeUInt32LE(entry.crc, 16)
      header.writeUInt32LE(entry.compressed, 20)
      header.writeUInt32LE(entry.size, 24)
      header.writeUInt16LE(entry.name.length, 28)
      header.writeUInt32LE(entry.offset, 42)
      await this.#write(Buffer.concat([header, entry.name]))
    }
    const end = Buffer.alloc(22)
    end.writeUInt32LE(0x06054b50, 0)
    end.writeUInt16LE(this.#entries.length, 8)
    end.writeUInt16LE(this.#entries.length, 10)
    end.writeUInt32LE(this.#offset - start, 12)
    end.writeUInt32LE(start, 16)
    await this.#write(end)
    this.#out.end()
    await once(this.#out, 'finish')
  }
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`
const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`
const WORKBOOK_RELS = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`
const workbookXml = (sheet: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="${escapeXml(sheet)}" sheetId="1" r:id="rId1"/></sheets></workbook>`

/** Writes `rows` (the first is the header) to `file` as a one-sheet workbook with the stand-in's typed cells. */
export const writeWorkbook = async (file: string, sheet: string, rows: Iterable<Row>): Promise<void> => {
  const zip = new ZipWriter(file)
  const strings = new Map<string, number>()
  const formats = new Map<string, number>()
  const styleOf = (numFmt: string): number => {
    const style = formats.get(numFmt) ?? formats.size + 1
    formats.set(numFmt, style)
    return style
  }
  function* sheetXml(): Generator<string> {
    let pending = `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
    let r = 0
    for (const row of rows) {
      r++
      pending += `<row r="${r}">`
      row.forEach((text, c) => {
        const { value, numFmt } = typedCell(text)
        if (value === null) return
        const ref = `${columnName(c)}${r}`
        const style = numFmt === undefined ? '' : ` s="${styleOf(numFmt)}"`
        if (typeof value === 'string') {
          const index = strings.get(value) ?? strings.size
          strings.set(value, index)
          pending += `<c r="${ref}" t="s"><v>${index}</v></c>`
        } else if (typeof value === 'boolean') pending += `<c r="${ref}" t="b"><v>${value ? 1 : 0}</v></c>`
        else if (value instanceof Date) {
          pending += `<c r="${ref}"${style}><v>${EPOCH_1900 + value.getTime() / MS_PER_DAY}</v></c>`
        } else pending += `<c r="${ref}"${style}><v>${value}</v></c>`
      })
      pending += '</row>'
      if (pending.length >= CHUNK_CHARS) {
        yield pending
        pending = ''
      }
    }
    yield `${pending}</sheetData></worksheet>`
  }
  await zip.entry('[Content_Types].xml', [CONTENT_TYPES])
  await zip.entry('_rels/.rels', [ROOT_RELS])
  await zip.entry('xl/workbook.xml', [workbookXml(sheet)])
  await zip.entry('xl/_rels/workbook.xml.rels', [WORKBOOK_RELS])
  await zip.entry('xl/worksheets/sheet1.xml', sheetXml())
  const numFmts = [...formats.keys()].map(
    (code, i) => `<numFmt numFmtId="${164 + i}" formatCode="${escapeXml(code)}"/>`,
  )
  const xfs = [...formats.keys()].map((_, i) => `<xf numFmtId="${164 + i}" applyNumberFormat="1"/>`)
  await zip.entry('xl/styles.xml', [
    `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="${numFmts.length}">${numFmts.join('')}</numFmts><cellXfs count="${xfs.length + 1}"><xf numFmtId="0"/>${xfs.join('')}</cellXfs></styleSheet>`,
  ])
  await zip.entry(
    'xl/sharedStrings.xml',
    (function* () {
      yield `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${strings.size}" uniqueCount="${strings.size}">`
      for (const text of strings.keys()) yield `<si><t xml:space="preserve">${escapeXml(text)}</t></si>`
      yield '</sst>'
    })(),
  )
  await zip.close()
}
