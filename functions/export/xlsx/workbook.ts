/**
 * The parts of a workbook around its cells: which worksheet is the table (the one `tables[].sheet` names, else the
 * first visible one in workbook order, chart sheets skipped), the date system, each cell style's number format, and the shared strings. Each part is small
 * next to the sheet, except the shared strings (bounded in shared-strings.ts); what a hostile workbook could make
 * large here (sheets, relationships, cell styles, number formats) is counted as it streams and bounded.
 */
import path from 'node:path/posix'
import { quotePrefix, WorkbookError } from '../core/errors.ts'
import { builtInFormat, customFormat, type NumberFormat } from './number-format.ts'
import { readSharedStrings } from './shared-strings.ts'
import { SharedStringTable, type StringTableOptions } from './string-table.ts'
import { parseXmlEntry, type XmlOptions, type XmlTag } from './xml.ts'
import { MAX_ZIP_ENTRIES, type ZipArchive } from './zip.ts'

const DEFAULT_WORKBOOK_PATH = 'xl/workbook.xml'
const OFFICE_DOCUMENT = /\/officeDocument$/
const WORKSHEET = /\/worksheet$/

/** Cell styles (`<xf>` of `<cellXfs>`): Excel allows 64,000; four times that is still a few MB. */
const MAX_CELL_STYLES = 256_000
/** Custom number formats (`<numFmt>`): Excel allows about 250 per workbook. */
const MAX_NUMBER_FORMATS = 4_096
/** Characters of one number format's code: Excel allows 255. Longer codes are refused before they are read. */
const MAX_FORMAT_CODE_CHARS = 1_024
/** Sheets listed, and relationships of one part: each names a zip entry, and a zip has at most MAX_ZIP_ENTRIES. */
const MAX_WORKBOOK_SHEETS = MAX_ZIP_ENTRIES
const MAX_RELATIONSHIPS = MAX_ZIP_ENTRIES
/** Characters of a sheet's name: Excel allows 31. */
const MAX_SHEET_NAME_CHARS = 255
/** Built-in number format ids are 0 to 163; a higher id must be defined by a `<numFmt>`. */
const FIRST_CUSTOM_FORMAT_ID = 164
const DIGITS = /^[0-9]{1,9}$/
/** Worksheets a message names when the one asked for is not there: enough to spot a typo, never a flood. */
const SHEETS_NAMED = 10
/** `<sheet state>` values that keep a sheet out of the user's sight: such a sheet is read only when named. */
const HIDDEN_STATES = new Set(['hidden', 'veryHidden'])

export interface WorkbookParts {
  /** Name of the worksheet read, as the workbook shows it. */
  readonly sheetName: string
  /** Zip entry of that worksheet's XML. */
  readonly sheetPath: string
  readonly date1904: boolean
  /** Number format of each cell style (`s` attribute of a cell). */
  readonly formats: readonly NumberFormat[]
  /** Close it when done: it may hold spill files. */
  readonly sharedStrings: SharedStringTable
}

interface Relationship {
  readonly type: string
  readonly target: string
}

/**
 * How the parts are read: the field limit (which bounds any piece of XML and any shared string), the deadline, and
 * the worksheet the table names (`tables[].sheet`), if any.
 */
type PartOptions = Omit<XmlOptions, 'maxPendingChars'> & {
  readonly maxFieldBytes: number
  readonly sheet?: string | undefined
}

interface ListedSheet {
  readonly name: string
  readonly relationId: string
  readonly hidden: boolean
}

export const readWorkbookParts = async (
  zip: ZipArchive,
  tableId: string,
  strings: StringTableOptions,
  options: PartOptions,
): Promise<WorkbookParts> => {
  const xml: XmlOptions = { maxPendingChars: options.maxFieldBytes, signal: options.signal }
  const readRelationships = (part: string, base: string) => readRelationshipsPart(zip, part, base, tableId, xml)
  const rootRelations = zip.names.has('_rels/.rels') ? await readRelationships('_rels/.rels', '') : []
  const office = [...rootRelations.values()].find((r) => OFFICE_DOCUMENT.test(r.type))
  const workbookPath = office?.target ?? DEFAULT_WORKBOOK_PATH
  if (!zip.names.has(workbookPath)) {
    throw new WorkbookError('XLSX_MALFORMED', { tableId, reason: `the zip has no workbook part (${workbookPath})` })
  }
  const base = path.dirname(workbookPath)
  const relationsPath = path.join(base, '_rels', `${path.basename(workbookPath)}.rels`)
  const relations = zip.names.has(relationsPath) ? await readRelationships(relationsPath, base) : new Map()
  const { sheets, date1904 } = await readWorkbook(zip, workbookPath, tableId, xml)
  const worksheets = sheets.flatMap((s) => {
    const relation = relations.get(s.relationId)
    const found = relation !== undefined && WORKSHEET.test(relation.type) && zip.names.has(relation.target)
    return found ? [{ ...s, target: relation.target }] : []
  })
  const sheet = chooseWorksheet(worksheets, sheets.length, tableId, options.sheet)
  const target = (type: RegExp) => [...relations.values()].find((r) => type.test(r.type))?.target
  const stylesPath = target(/\/styles$/)
  const stringsPath = target(/\/sharedStrings$/)
  return {
    sheetName: sheet.name,
    sheetPath: sheet.target,
    date1904,
    formats: stylesPath && zip.names.has(stylesPath) ? await readCellFormats(zip, stylesPath, tableId, xml) : [],
    sharedStrings:
      stringsPath && zip.names.has(stringsPath)
        ? await readSharedStrings(
            await zip.open(stringsPath),
            tableId,
            { ...strings, partBytes: zip.inflatedSize(stringsPath) },
            {
              ...xml,
              maxFieldBytes: options.maxFieldBytes,
            },
          )
        : new SharedStringTable(),
  }
}

/**
 * The table's worksheet: the one named, hidden or not; else the first visible one, since a hidden sheet (lookup
 * lists, a pivot's source) is not what the user sees as the table. Either missing fails, naming the worksheets.
 */
const chooseWorksheet = <T extends ListedSheet>(
  worksheets: readonly T[],
  listed: number,
  tableId: string,
  named: string | undefined,
): T => {
  const sheet = named === undefined ? worksheets.find((s) => !s.hidden) : worksheets.find((s) => s.name === named)
  if (sheet !== undefined) return sheet
  if (worksheets.length === 0) {
    throw new WorkbookError('XLSX_NO_WORKSHEET', {
      tableId,
      reason: `the workbook has no worksheet (${listed} sheet${listed === 1 ? '' : 's'} listed, none a worksheet in the zip)`,
    })
  }
  const names = worksheets
    .slice(0, SHEETS_NAMED)
    .map((s) => `${quotePrefix(s.name)}${s.hidden ? ' (hidden)' : ''}`)
    .join(', ')
  const more = worksheets.length > SHEETS_NAMED ? ` and ${worksheets.length - SHEETS_NAMED} more` : ''
  throw new WorkbookError('XLSX_NO_WORKSHEET', {
    tableId,
    reason:
      named === undefined
        ? `the workbook has no visible worksheet (worksheets: ${names}${more})`
        : `the workbook has no worksheet named ${quotePrefix(named)} (worksheets: ${names}${more})`,
    hint:
      named === undefined
        ? 'every worksheet is hidden: name the one to read in tables[].sheet; the previous data is kept'
        : 'set tables[].sheet to one of the worksheets named above, or remove it to read the first visible one; the previous data is kept',
  })
}

/** A relationships part: id -> type and target, targets resolved against `base` (absolute ones from the root). */
const readRelationshipsPart = async (
  zip: ZipArchive,
  part: string,
  base: string,
  tableId: string,
  xml: XmlOptions,
): Promise<Map<string, Relationship>> => {
  const relations = new Map<string, Relationship>()
  let count = 0
  await parseXmlEntry(
    await zip.open(part),
    part,
    tableId,
    {
      open: (tag) => {
        if (tag.name !== 'Relationship') return
        if (++count > MAX_RELATIONSHIPS) throw tooMany(tableId, part, 'relationships', MAX_RELATIONSHIPS)
        if (tag.attributes.TargetMode === 'External') return
        const { Id: id, Type: type = '', Target: target = '' } = tag.attributes
        if (id === undefined) return
        relations.set(id, {
          type,
          target: target.startsWith('/') ? target.slice(1) : path.normalize(path.join(base, target)),
        })
      },
    },
    xml,
  )
  return relations
}

const readWorkbook = async (zip: ZipArchive, part: string, tableId: string, xml: XmlOptions) => {
  const sheets: ListedSheet[] = []
  let date1904 = false
  const open = (tag: XmlTag) => {
    if (tag.name === 'sheet') {
      if (sheets.length >= MAX_WORKBOOK_SHEETS) throw tooMany(tableId, part, 'sheets', MAX_WORKBOOK_SHEETS)
      const name = tag.attributes.name ?? ''
      if (name.length > MAX_SHEET_NAME_CHARS) {
        throw new WorkbookError('XLSX_MALFORMED', {
          tableId,
          reason: `the workbook's ${part} names a sheet of ${name.length} characters (at most ${MAX_SHEET_NAME_CHARS}): "${name.slice(0, 32)}…"`,
        })
      }
      const relationId = tag.attributes['r:id'] ?? relationAttribute(tag.attributes)
      const hidden = HIDDEN_STATES.has(tag.attributes.state ?? '')
      if (relationId !== undefined) sheets.push({ name, relationId, hidden })
    } else if (tag.name === 'workbookPr') {
      const value = tag.attributes.date1904
      date1904 = value === '1' || value === 'true'
    }
  }
  await parseXmlEntry(await zip.open(part), part, tableId, { open }, xml)
  return { sheets, date1904 }
}

/** The relationship id under whatever prefix the writer bound the relationships namespace to. */
const relationAttribute = (attributes: Record<string, string>): string | undefined =>
  Object.entries(attributes).find(([name]) => name.endsWith(':id'))?.[1]

/**
 * Each cell style's number format: `<cellXfs>` in order, their `numFmtId` looked up among `<numFmts>` first. Ids
 * are digits; a custom id no `<numFmt>` defines is malformed. Styles and formats are counted as they stream.
 */
const readCellFormats = async (
  zip: ZipArchive,
  part: string,
  tableId: string,
  xml: XmlOptions,
): Promise<NumberFormat[]> => {
  const custom = new Map<number, NumberFormat>()
  const styles: number[] = []
  let inCellXfs = false
  const formatId = (value: string | undefined, what: string): number => {
    if (value !== undefined && DIGITS.test(value)) return Number(value)
    throw new WorkbookError('XLSX_MALFORMED', {
      tableId,
      reason: `the workbook's ${part} has ${what} with numFmtId "${(value ?? '').slice(0, 32)}" (an id is a whole number)`,
    })
  }
  const open = (tag: XmlTag) => {
    if (tag.name === 'numFmt') {
      if (custom.size >= MAX_NUMBER_FORMATS) throw tooMany(tableId, part, 'number formats', MAX_NUMBER_FORMATS)
      const id = formatId(tag.attributes.numFmtId, 'a number format')
      const code = tag.attributes.formatCode ?? ''
      if (code.length > MAX_FORMAT_CODE_CHARS) {
        throw new WorkbookError('XLSX_MALFORMED', {
          tableId,
          reason: `the workbook's ${part} has number format ${id} with a code of ${code.length} characters (at most ${MAX_FORMAT_CODE_CHARS})`,
        })
      }
      custom.set(id, customFormat(code))
    } else if (tag.name === 'cellXfs') inCellXfs = true
    else if (tag.name === 'xf' && inCellXfs) {
      if (styles.length >= MAX_CELL_STYLES) throw tooMany(tableId, part, 'cell styles', MAX_CELL_STYLES)
      styles.push(formatId(tag.attributes.numFmtId ?? '0', `cell style ${styles.length}`))
    }
  }
  const close = (name: string) => {
    if (name === 'cellXfs') inCellXfs = false
  }
  await parseXmlEntry(await zip.open(part), part, tableId, { open, close }, xml)
  return styles.map((id, style) => {
    const format = custom.get(id)
    if (format !== undefined) return format
    if (id < FIRST_CUSTOM_FORMAT_ID) return builtInFormat(id)
    throw new WorkbookError('XLSX_MALFORMED', {
      tableId,
      reason: `the workbook's ${part} has cell style ${style} with number format ${id}, which it does not define`,
    })
  })
}

const tooMany = (tableId: string, part: string, what: string, bound: number): Error =>
  new WorkbookError('XLSX_TOO_LARGE', {
    tableId,
    reason: `the workbook's ${part} has more than ${bound.toLocaleString('en-US')} ${what}`,
  })
