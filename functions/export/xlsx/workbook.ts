/**
 * The parts of a workbook around its cells: which worksheet is the table (the first in workbook order, chart
 * sheets skipped), the date system, each cell style's number format, and the shared strings. Each part is small
 * next to the sheet, except the shared strings (bounded in shared-strings.ts).
 */
import path from 'node:path/posix'
import { WorkbookError } from '../core/errors.ts'
import { builtInFormat, customFormat, GENERAL_FORMAT, type NumberFormat } from './number-format.ts'
import { readSharedStrings } from './shared-strings.ts'
import { SharedStringTable, type StringTableOptions } from './string-table.ts'
import { parseXmlEntry } from './xml.ts'
import type { ZipArchive } from './zip.ts'

const DEFAULT_WORKBOOK_PATH = 'xl/workbook.xml'
const OFFICE_DOCUMENT = /\/officeDocument$/
const WORKSHEET = /\/worksheet$/

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

export const readWorkbookParts = async (
  zip: ZipArchive,
  tableId: string,
  strings: StringTableOptions,
): Promise<WorkbookParts> => {
  const rootRelations = zip.names.has('_rels/.rels') ? await readRelationships(zip, '_rels/.rels', '', tableId) : []
  const office = [...rootRelations.values()].find((r) => OFFICE_DOCUMENT.test(r.type))
  const workbookPath = office?.target ?? DEFAULT_WORKBOOK_PATH
  if (!zip.names.has(workbookPath)) {
    throw new WorkbookError('XLSX_MALFORMED', { tableId, reason: `the zip has no workbook part (${workbookPath})` })
  }
  const base = path.dirname(workbookPath)
  const relationsPath = path.join(base, '_rels', `${path.basename(workbookPath)}.rels`)
  const relations = zip.names.has(relationsPath)
    ? await readRelationships(zip, relationsPath, base, tableId)
    : new Map()
  const { sheets, date1904 } = await readWorkbook(zip, workbookPath, tableId)
  const sheet = sheets
    .map((s) => ({ name: s.name, relation: relations.get(s.relationId) }))
    .find((s) => s.relation !== undefined && WORKSHEET.test(s.relation.type) && zip.names.has(s.relation.target))
  if (sheet === undefined) {
    throw new WorkbookError('XLSX_NO_WORKSHEET', {
      tableId,
      reason: `the workbook has no worksheet (${sheets.length} sheet${sheets.length === 1 ? '' : 's'} listed, none a worksheet in the zip)`,
    })
  }
  const target = (type: RegExp) => [...relations.values()].find((r) => type.test(r.type))?.target
  const stylesPath = target(/\/styles$/)
  const stringsPath = target(/\/sharedStrings$/)
  return {
    sheetName: sheet.name,
    sheetPath: sheet.relation!.target,
    date1904,
    formats: stylesPath && zip.names.has(stylesPath) ? await readCellFormats(zip, stylesPath, tableId) : [],
    sharedStrings:
      stringsPath && zip.names.has(stringsPath)
        ? await readSharedStrings(await zip.open(stringsPath), tableId, strings)
        : new SharedStringTable(),
  }
}

/** A relationships part: id -> type and target, targets resolved against `base` (absolute ones from the root). */
const readRelationships = async (
  zip: ZipArchive,
  part: string,
  base: string,
  tableId: string,
): Promise<Map<string, Relationship>> => {
  const relations = new Map<string, Relationship>()
  await parseXmlEntry(await zip.open(part), part, tableId, {
    open: (tag) => {
      if (tag.name !== 'Relationship' || tag.attributes.TargetMode === 'External') return
      const { Id: id, Type: type = '', Target: target = '' } = tag.attributes
      if (id === undefined) return
      relations.set(id, {
        type,
        target: target.startsWith('/') ? target.slice(1) : path.normalize(path.join(base, target)),
      })
    },
  })
  return relations
}

const readWorkbook = async (zip: ZipArchive, part: string, tableId: string) => {
  const sheets: { name: string; relationId: string }[] = []
  let date1904 = false
  await parseXmlEntry(await zip.open(part), part, tableId, {
    open: (tag) => {
      if (tag.name === 'sheet') {
        const relationId = tag.attributes['r:id'] ?? relationAttribute(tag.attributes)
        if (relationId !== undefined) sheets.push({ name: tag.attributes.name ?? '', relationId })
      } else if (tag.name === 'workbookPr') {
        const value = tag.attributes.date1904
        date1904 = value === '1' || value === 'true'
      }
    },
  })
  return { sheets, date1904 }
}

/** The relationship id under whatever prefix the writer bound the relationships namespace to. */
const relationAttribute = (attributes: Record<string, string>): string | undefined =>
  Object.entries(attributes).find(([name]) => name.endsWith(':id'))?.[1]

/** Each cell style's number format: `<cellXfs>` in order, their `numFmtId` looked up among `<numFmts>` first. */
const readCellFormats = async (zip: ZipArchive, part: string, tableId: string): Promise<NumberFormat[]> => {
  const custom = new Map<number, NumberFormat>()
  const styles: number[] = []
  let inCellXfs = false
  await parseXmlEntry(await zip.open(part), part, tableId, {
    open: (tag) => {
      if (tag.name === 'numFmt') {
        custom.set(Number(tag.attributes.numFmtId), customFormat(tag.attributes.formatCode ?? ''))
      } else if (tag.name === 'cellXfs') inCellXfs = true
      else if (tag.name === 'xf' && inCellXfs) styles.push(Number(tag.attributes.numFmtId ?? 0))
    },
    close: (name) => {
      if (name === 'cellXfs') inCellXfs = false
    },
  })
  return styles.map((id) => (Number.isInteger(id) ? (custom.get(id) ?? builtInFormat(id)) : GENERAL_FORMAT))
}
