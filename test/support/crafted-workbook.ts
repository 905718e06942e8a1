/**
 * Hand-built workbooks for hostile-input tests: a minimal, valid xlsx zip around whatever sheet, shared-strings
 * or styles XML a test crafts, so that a test can say exactly which bytes the reader meets.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ZipWriter } from '../../bench/workbook-writer.ts'

/** XML as one string, or in pieces streamed to the zip (for parts far larger than a test should hold). */
export type XmlText = string | Iterable<string> | AsyncIterable<string>

/** One worksheet of a crafted workbook, listed in workbook.xml as `<sheet name state>`. */
export interface CraftedSheet {
  readonly name: string
  readonly state?: 'visible' | 'hidden' | 'veryHidden'
  readonly sheetData: XmlText
}

export interface WorkbookXml {
  /** The worksheet's `<sheetData>` content (rows and cells), as the only sheet, named `Sheet1`. */
  readonly sheetData?: XmlText
  /** The worksheets in workbook order, instead of `sheetData`. */
  readonly sheets?: readonly CraftedSheet[]
  /** `<si>` items of `xl/sharedStrings.xml`; without them the workbook has no shared-strings part. */
  readonly sharedStrings?: readonly string[] | undefined
  /** The whole `xl/styles.xml`; without it the workbook has no styles part. */
  readonly styles?: XmlText | undefined
}

const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'

async function* concat(...texts: XmlText[]): AsyncGenerator<string> {
  for (const text of texts) {
    if (typeof text === 'string') yield text
    else yield* text
  }
}

/** The parts of a workbook (one sheet unless `sheets` lists more), by zip path. */
export const workbookParts = ({
  sheetData = '',
  sheets = [{ name: 'Sheet1', sheetData }],
  sharedStrings,
  styles,
}: WorkbookXml): Record<string, XmlText> => {
  const listed = sheets
    .map(
      (s, i) =>
        `<sheet name="${s.name}" sheetId="${i + 1}"${s.state ? ` state="${s.state}"` : ''} r:id="rId${i + 10}"/>`,
    )
    .join('')
  const parts: Record<string, XmlText> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="xml" ContentType="application/xml"/></Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets>${listed}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      sheets
        .map(
          (_, i) => `<Relationship Id="rId${i + 10}" Type="${RELS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
        )
        .join('') +
      (sharedStrings ? `<Relationship Id="rId2" Type="${RELS}/sharedStrings" Target="sharedStrings.xml"/>` : '') +
      (styles ? `<Relationship Id="rId3" Type="${RELS}/styles" Target="styles.xml"/>` : '') +
      '</Relationships>',
  }
  sheets.forEach((sheet, i) => {
    parts[`xl/worksheets/sheet${i + 1}.xml`] = concat(
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>`,
      sheet.sheetData,
      '</sheetData></worksheet>',
    )
  })
  if (sharedStrings) {
    const items = sharedStrings.map((text) => `<si><t>${text}</t></si>`).join('')
    parts['xl/sharedStrings.xml'] =
      `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}" count="${sharedStrings.length}" uniqueCount="${sharedStrings.length}">${items}</sst>`
  }
  if (styles) parts['xl/styles.xml'] = styles
  return parts
}

/** Writes a workbook from crafted XML to `file`, streaming each part through the zip writer. */
export const writeCraftedWorkbook = async (file: string, xml: WorkbookXml): Promise<void> => {
  const zip = new ZipWriter(file)
  for (const [name, content] of Object.entries(workbookParts(xml))) {
    await zip.entry(name, typeof content === 'string' ? [content] : content)
  }
  await zip.close()
}

/** A workbook from crafted XML, zipped by the bench's streaming zip writer. */
export const craftedWorkbook = async (xml: WorkbookXml): Promise<Buffer> => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'crafted-workbook-'))
  try {
    const file = path.join(folder, 'crafted.xlsx')
    await writeCraftedWorkbook(file, xml)
    return await readFile(file)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

const FILLER_BLOCK_CHARS = 16 * 1024
const FILLER_NOISE_CHARS = 200

/**
 * About `chars` letters of cell text that deflates about 60 times, under the reader's zip-bomb ratio (100), so a
 * test reaches the limit it means to and not that one: a random block repeated, each copy followed by fresh noise.
 */
export function* fillerText(chars: number, seed = 1): Generator<string> {
  let state = seed
  const letters = (count: number) => {
    let text = ''
    for (let i = 0; i < count; i++) {
      state = (Math.imul(state, 1_103_515_245) + 12_345) & 0x7fffffff
      text += String.fromCharCode(97 + ((state >>> 16) % 26))
    }
    return text
  }
  const block = letters(FILLER_BLOCK_CHARS)
  let pending = ''
  for (let written = 0; written < chars; ) {
    const piece = `${block}${letters(FILLER_NOISE_CHARS)}`.slice(0, chars - written)
    written += piece.length
    pending += piece
    if (pending.length >= 1024 * 1024) {
      yield pending
      pending = ''
    }
  }
  if (pending) yield pending
}
