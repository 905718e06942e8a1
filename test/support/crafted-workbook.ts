/**
 * Hand-built workbooks for hostile-input tests: a minimal, valid xlsx zip around whatever sheet, shared-strings
 * or styles XML a test crafts, so that a test can say exactly which bytes the reader meets.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ZipWriter } from '../../bench/workbook-writer.ts'

export interface WorkbookXml {
  /** The worksheet's `<sheetData>` content (rows and cells). */
  readonly sheetData: string
  /** `<si>` items of `xl/sharedStrings.xml`; without them the workbook has no shared-strings part. */
  readonly sharedStrings?: readonly string[] | undefined
  /** The whole `xl/styles.xml`; without it the workbook has no styles part. */
  readonly styles?: string | undefined
}

const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'

/** The parts of a one-sheet workbook, by zip path. */
export const workbookParts = ({ sheetData, sharedStrings, styles }: WorkbookXml): Record<string, string> => {
  const parts: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="xml" ContentType="application/xml"/></Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      `<Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/>` +
      (sharedStrings ? `<Relationship Id="rId2" Type="${RELS}/sharedStrings" Target="sharedStrings.xml"/>` : '') +
      (styles ? `<Relationship Id="rId3" Type="${RELS}/styles" Target="styles.xml"/>` : '') +
      '</Relationships>',
    'xl/worksheets/sheet1.xml': `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${sheetData}</sheetData></worksheet>`,
  }
  if (sharedStrings) {
    const items = sharedStrings.map((text) => `<si><t>${text}</t></si>`).join('')
    parts['xl/sharedStrings.xml'] =
      `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}" count="${sharedStrings.length}" uniqueCount="${sharedStrings.length}">${items}</sst>`
  }
  if (styles) parts['xl/styles.xml'] = styles
  return parts
}

/** A one-sheet workbook from crafted XML, zipped by the bench's streaming zip writer. */
export const craftedWorkbook = async (xml: WorkbookXml): Promise<Buffer> => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'crafted-workbook-'))
  try {
    const file = path.join(folder, 'crafted.xlsx')
    const zip = new ZipWriter(file)
    for (const [name, content] of Object.entries(workbookParts(xml))) await zip.entry(name, [content])
    await zip.close()
    return await readFile(file)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}
