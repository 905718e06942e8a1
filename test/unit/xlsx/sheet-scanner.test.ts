/**
 * The worksheet's byte scanner (xlsx/sheet.ts on xlsx/xml-scanner.ts) against the saxes-based reader it replaced
 * (test/support/saxes-sheet.ts): for worksheets in every form XML allows, well-formed or broken, split into chunks
 * at any byte, both give the same header, rows and error cells, or fail with the same code. The same for the
 * shared strings (xlsx/shared-strings.ts against test/support/saxes-shared-strings.ts).
 */
import { Readable } from 'node:stream'
import fc from 'fast-check'
import { SaxesParser } from 'saxes'
import { describe, expect, it } from 'vitest'
import type { RecordLimits } from '../../../functions/export/csv/record-guard.ts'
import { builtInFormat, customFormat, GENERAL_FORMAT } from '../../../functions/export/xlsx/number-format.ts'
import { readSharedStrings } from '../../../functions/export/xlsx/shared-strings.ts'
import { openSheetRows } from '../../../functions/export/xlsx/sheet.ts'
import { SharedStringTable } from '../../../functions/export/xlsx/string-table.ts'
import type { WorkbookParts } from '../../../functions/export/xlsx/workbook.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'
import { readSharedStringsWithSaxes } from '../../support/saxes-shared-strings.ts'
import { openSheetRowsWithSaxes } from '../../support/saxes-sheet.ts'
import { readSheetOutcome, type SheetReader, splitAtFractions } from '../../support/sheet-outcome.ts'

const SHARED = ['host-1', 'Zürich', '', 'a&b', '😀 wide', '_x000D_ escaped']
const FORMATS = [
  GENERAL_FORMAT,
  builtInFormat(2),
  builtInFormat(14),
  builtInFormat(22),
  builtInFormat(21),
  customFormat('0.000'),
]
const TIGHT: RecordLimits = { maxColumns: 6, maxRecordBytes: 120, maxFieldBytes: 40 }

const parts = (date1904: boolean): WorkbookParts => {
  const sharedStrings = new SharedStringTable()
  for (const text of SHARED) sharedStrings.add(text)
  sharedStrings.finish()
  return { sheetName: 'Sheet1', sheetPath: 'xl/worksheets/sheet1.xml', date1904, formats: FORMATS, sharedStrings }
}

const read = (reader: SheetReader, pieces: Buffer[], limits: RecordLimits, date1904: boolean) =>
  readSheetOutcome(reader, pieces, parts(date1904), limits)

// ---- worksheets in every form ----

const character = fc.constantFrom(
  ...'aZ09 \t\n.-+e_',
  '\r',
  '<',
  '>',
  '&',
  '"',
  "'",
  'é',
  '€',
  '😀',
  '_x000D_',
  '_x0041_',
)
const text = fc.array(character, { maxLength: 12 }).map((chars) => chars.join(''))
/** XML for `value` as text: each character plain where it may be, or as an entity or a character reference. */
const escaped = (value: string) =>
  fc.array(fc.nat({ max: 3 }), { minLength: value.length, maxLength: value.length }).map((ways) =>
    [...value]
      .map((c, i) => {
        const way = ways[i] ?? 0
        const code = c.codePointAt(0)!
        if (c === '<') return way % 2 === 0 ? '&lt;' : '&#60;'
        if (c === '&') return way % 2 === 0 ? '&amp;' : '&#x26;'
        if (c === '\r') return '&#13;'
        if (way === 1) return `&#${code};`
        if (way === 2) return `&#x${code.toString(16)};`
        if (way === 3 && c === '>') return '&gt;'
        return c
      })
      .join(''),
  )
/** Between two pieces of markup: nothing, whitespace, a comment or a processing instruction. */
const filler = fc.constantFrom('', '', '', ' ', '\r\n', '\n\t', '<!-- a comment -->', '<?pi some data?>', '<!---->')
/** A value as XML text: escaped, in CDATA, or in two pieces around a comment. */
const valueXml = (value: string) =>
  fc.oneof(
    escaped(value),
    fc.constant(value.includes(']]>') ? value.replace(/&/g, '&amp;').replace(/</g, '&lt;') : `<![CDATA[${value}]]>`),
    fc.tuple(escaped(value.slice(0, 2)), escaped(value.slice(2))).map(([a, b]) => `${a}<!--x-->${b}`),
  )
const attribute = (name: string, value: string) =>
  fc
    .tuple(
      fc.constantFrom('"', "'"),
      fc.constantFrom('', ' ', '\n'),
      fc.constantFrom(' ', '\t', '\r\n  '),
      escaped(value),
    )
    .map(([quote, around, before, xml]) => `${before}${name}${around}=${around}${quote}${xml}${quote}`)
const number = fc.oneof(
  fc.integer({ min: -5000, max: 5000 }).map(String),
  fc.double({ noNaN: true, min: -1e6, max: 1e6 }).map(String),
  fc.constantFrom('00', '-0', ' 12', '1e3', '0x10', 'abc', '', '12.50', '45000.5', '1e400', '007', '9007199254740993'),
)
const cellValue = fc.oneof(
  fc.record({
    t: fc.constant('s'),
    v: fc.oneof(fc.nat({ max: SHARED.length + 1 }).map(String), fc.constantFrom('1.0', '-1', '', 'x')),
  }),
  fc.record({ t: fc.constantFrom('n', undefined, 'q'), v: number }),
  fc.record({ t: fc.constantFrom('str', 'd', 'e'), v: text }),
  fc.record({ t: fc.constant('b'), v: fc.constantFrom('0', '1', 'true', 'false', '') }),
  fc.record({
    t: fc.constant('inlineStr'),
    v: fc.constant(undefined),
    runs: fc.array(text, { minLength: 1, maxLength: 3 }),
  }),
)
const LETTERS = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']

const cell = (p: string, column: number, row: number) =>
  fc
    .record({
      value: cellValue,
      reference: fc.constantFrom('given', 'given', 'absent', 'odd'),
      style: fc.constantFrom(undefined, '0', '1', '2', '3', '4', '5', '9', 'x'),
      order: fc.nat(),
      formula: fc.boolean(),
      selfClosing: fc.nat({ max: 9 }),
      filler,
      // Written as nearly every writer does, which sheet.ts reads straight from the bytes (cell-form.ts).
      plain: fc.boolean(),
    })
    .chain(({ value, reference, style, order, formula, selfClosing, filler, plain }) => {
      const r =
        reference === 'given' ? `${LETTERS[column]}${row}` : reference === 'odd' ? `${LETTERS[column]}0` : undefined
      const attributes = [
        r === undefined ? undefined : attribute('r', r),
        value.t === undefined ? undefined : attribute('t', value.t),
        style === undefined ? undefined : attribute('s', style),
      ].filter((a) => a !== undefined)
      const body =
        'runs' in value && value.runs
          ? fc.tuple(...value.runs.map((run) => valueXml(run)), fc.boolean()).map((xml) => {
              const rich = xml.pop() as boolean
              const runs = xml as string[]
              return rich || runs.length > 1
                ? `<${p}is>${runs.map((run) => `<${p}r><${p}rPr><${p}b/></${p}rPr><${p}t xml:space="preserve">${run}</${p}t></${p}r>`).join(filler)}<${p}rPh sb="0"><${p}t>ignored</${p}t></${p}rPh></${p}is>`
                : `<${p}is><${p}t>${runs[0]}</${p}t></${p}is>`
            })
          : valueXml(value.v ?? '').map((xml) => (xml === '' && selfClosing < 3 ? `<${p}v/>` : `<${p}v>${xml}</${p}v>`))
      if (plain && !('runs' in value && value.runs)) {
        const attrs = [
          ['r', r],
          ['s', style],
          ['t', value.t],
        ].filter(([, v]) => v !== undefined)
        const tag = `<${p}c${attrs.map(([name, v]) => ` ${name}="${v}"`).join('')}>`
        const v = value.v ?? ''
        return fc
          .oneof(fc.constant(v.replace(/&/g, '&amp;').replace(/</g, '&lt;')), valueXml(v))
          .map((xml) => `${tag}<${p}v>${xml}</${p}v></${p}c>`)
      }
      return fc.tuple(fc.tuple(...attributes), body).map(([attrs, xml]) => {
        const rotated =
          attrs.length === 0 ? attrs : [...attrs.slice(order % attrs.length), ...attrs.slice(0, order % attrs.length)]
        if (selfClosing === 9) return `<${p}c${rotated.join('')}/>`
        const f = formula ? `<${p}f>SUM(A1:A2)&amp;"&lt;x"</${p}f>` : ''
        return `<${p}c${rotated.join('')}>${filler}${f}${xml}</${p}c>${filler}`
      })
    })

const row = (p: string, number: number) =>
  fc
    .tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), fc.constantFrom('given', 'absent', 'spans'), filler)
    .chain(([present, numbering, filler]) => {
      const columns = present.flatMap((on, column) => (on ? [column] : []))
      const r =
        numbering === 'absent'
          ? ''
          : ` r="${number}"${numbering === 'spans' ? ' spans="1:6" x14ac:dyDescent="0.25"' : ''}`
      return fc
        .tuple(...columns.map((column) => cell(p, column, number)))
        .map((cells) => `<${p}row${r}>${filler}${cells.join('')}</${p}row>${filler}`)
    })

const worksheet = fc
  .record({
    prefix: fc.constantFrom('', '', 'x:'),
    declaration: fc.boolean(),
    bom: fc.boolean(),
    rows: fc.integer({ min: 1, max: 6 }),
    extras: fc.boolean(),
    filler,
  })
  .chain(({ prefix: p, declaration, bom, rows, extras, filler }) =>
    fc.tuple(...Array.from({ length: rows }, (_, i) => row(p, i + 1))).map((xml) => {
      const ns = p === '' ? 'xmlns' : 'xmlns:x'
      const before = extras
        ? `<${p}sheetPr><${p}tabColor rgb="FF00FF00"/></${p}sheetPr><${p}dimension ref="A1:F6"/>`
        : ''
      const after = extras
        ? `<${p}extLst><${p}ext uri="{x}"><${p}c>not a cell's text</${p}c></${p}ext></${p}extLst>`
        : ''
      return (
        (bom ? '\ufeff' : '') +
        (declaration ? '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n' : '') +
        `<${p}worksheet ${ns}="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${before}${filler}` +
        `<${p}sheetData>${xml.join('')}</${p}sheetData>${after}</${p}worksheet>${filler}`
      )
    }),
  )

/** Ways to break a worksheet: each one something the readers must refuse, or at least agree on. */
const MUTATIONS: readonly ((xml: string, at: number) => string)[] = [
  (xml, at) => xml.slice(0, Math.floor(at * xml.length)),
  (xml, at) => xml.slice(0, xml.lastIndexOf('>', Math.floor(at * xml.length)) + 1),
  (xml) => xml.replace(/<\/(x:)?c>/, '</$1v>'),
  (xml) => xml.replace(/<(x:)?c /, '<$1c s="0" s="0" '),
  (xml) => xml.replace(/<(x:)?v>/, '<$1v>&bogus;'),
  (xml) => xml.replace(/<(x:)?v>/, '<$1v>1<2'),
  (xml) => xml.replace(/<\/(x:)?row>/, ''),
  (xml) => `${xml}junk`,
  (xml) => `${xml}<second/>`,
  (xml) => xml.replace(/<(x:)?sheetData>/, `<$1sheetData>${'<a>'.repeat(70)}${'</a>'.repeat(70)}`),
  (xml) => xml.replace(/<(x:)?v>/, '<$1v>&#0;'),
  (xml) => xml.replace(/<(x:)?v>/, '<$1v>\u0001'),
  (xml) => xml.replace(/<(x:)?c /, '<$1c r=A1 '),
  (xml) => xml.replace(/<(x:)?c /, '<$1c r="A1"t="s" '),
  (xml) => xml.replace(/<(x:)?sheetData>/, '<!DOCTYPE x><$1sheetData>'),
]

/** Whether saxes finds `xml` well-formed, as a whole. */
const wellFormed = (xml: string): boolean => {
  const parser = new SaxesParser()
  let failed = false
  parser.on('error', () => {
    failed = true
  })
  parser.write(xml).close()
  return !failed
}

const agree = async (xml: string, cuts: number[], limits: RecordLimits, date1904: boolean) => {
  const pieces = splitAtFractions(Buffer.from(xml, 'utf8'), cuts)
  const scanned = await read(openSheetRows, pieces, limits, date1904)
  const reference = await read(openSheetRowsWithSaxes, pieces, limits, date1904)
  // saxes reports malformed XML once the piece it was written in has been parsed, so a cell's error in that piece
  // came first; the scanner stops at the malformed byte. Both refuse the worksheet.
  if ('code' in scanned && scanned.code === 'XLSX_MALFORMED' && 'code' in reference && !wellFormed(xml)) return
  expect(scanned, xml).toEqual(reference)
}

describe('the worksheet scanner reads what the saxes reader read', () => {
  it('gives the same rows for worksheets in every form XML allows, split into chunks anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        worksheet,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.boolean(),
        (xml, cuts, date1904) => agree(xml, cuts, DEFAULT_LIMITS, date1904),
      ),
      { numRuns: 300 },
    )
  })

  it('fails with the same code for broken worksheets and past the limits', async () => {
    await fc.assert(
      fc.asyncProperty(
        worksheet,
        fc.nat({ max: MUTATIONS.length }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.boolean(),
        async (xml, mutation, at, cuts, tight) => {
          const broken = mutation === MUTATIONS.length ? xml : MUTATIONS[mutation]!(xml, at)
          await agree(broken, cuts, tight ? TIGHT : DEFAULT_LIMITS, false)
        },
      ),
      { numRuns: 300 },
    )
  })
})

/**
 * How a one-run item opens its text: the two forms shared-strings.ts reads straight from the bytes, and near
 * misses of them the scanner reads.
 */
const textTag = fc.constantFrom(
  't>',
  't>',
  't xml:space="preserve">',
  "t xml:space='preserve'>",
  't >',
  't xml:space="default">',
)
/** The shared-strings part of `items` (each an `<si>`'s content), with the worksheet's prefix and fillers. */
const sharedStringsPart = fc
  .record({ prefix: fc.constantFrom('', '', 'x:'), count: fc.nat({ max: 10 }), filler })
  .chain(({ prefix: p, count, filler }) =>
    fc
      .tuple(
        ...Array.from({ length: count }, () =>
          fc
            .tuple(fc.array(text, { minLength: 1, maxLength: 3 }), textTag, fc.boolean())
            .chain(([runs, tag, plain]) =>
              fc
                .tuple(...runs.map((run) => (plain ? fc.constant(run.replace(/[<&]/g, '')) : valueXml(run))))
                .map((xml) =>
                  xml.length === 1
                    ? `<${p}si><${p}${tag}${xml[0]}</${p}t></${p}si>`
                    : `<${p}si>${xml.map((run) => `<${p}r><${p}rPr><${p}i/></${p}rPr><${p}t xml:space="preserve">${run}</${p}t></${p}r>`).join(filler)}<${p}rPh><${p}t>ruby</${p}t></${p}rPh></${p}si>`,
                ),
            ),
        ),
      )
      .map(
        (items) =>
          `<?xml version="1.0"?><${p}sst ${p === '' ? 'xmlns' : 'xmlns:x'}="urn:x" count="${count}">${filler}${items.join(filler)}</${p}sst>`,
      ),
  )

const readStrings = async (reader: typeof readSharedStrings, pieces: Buffer[], maxFieldBytes: number) => {
  try {
    const table = await reader(Readable.from(pieces), 't', {}, { maxPendingChars: maxFieldBytes, maxFieldBytes })
    const strings = Array.from({ length: table.count }, (_, i) => table.at(i))
    table.close()
    return { strings }
  } catch (error) {
    const { code, message } = error as { code: string; message: string }
    return code === 'XLSX_MALFORMED' ? { code } : { code, message }
  }
}

describe('the shared strings scanner reads what the saxes reader read', () => {
  it('gives the same strings, or the same code, for parts in every form, broken ones included', async () => {
    await fc.assert(
      fc.asyncProperty(
        sharedStringsPart,
        fc.nat({ max: MUTATIONS.length }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.constantFrom(24, 1024),
        async (xml, mutation, at, cuts, maxFieldBytes) => {
          const part =
            mutation === MUTATIONS.length
              ? xml
              : MUTATIONS[mutation]!(xml.replace(/si>/g, 'c>').replace(/<(x:)?t>/, '<$1v>'), at)
                  .replace(/c>/g, 'si>')
                  .replace(/<(x:)?v>/, '<$1t>')
          const pieces = splitAtFractions(Buffer.from(part, 'utf8'), cuts)
          const scanned = await readStrings(readSharedStrings, pieces, maxFieldBytes)
          const reference = await readStrings(readSharedStringsWithSaxes, pieces, maxFieldBytes)
          if ('code' in scanned && scanned.code === 'XLSX_MALFORMED' && 'code' in reference && !wellFormed(part)) return
          expect(scanned, part).toEqual(reference)
        },
      ),
      { numRuns: 300 },
    )
  })
})
