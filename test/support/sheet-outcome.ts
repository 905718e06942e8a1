/**
 * Two worksheet readers compared on the same bytes (the byte scanner against the saxes reference): what each made
 * of a sheet, and the sheet's bytes cut into chunks at chosen places.
 */
import { Readable } from 'node:stream'
import type { RecordLimits } from '../../functions/export/csv/record-guard.ts'
import { type RecordBatch, rowsAsText } from '../../functions/export/normalize/record-batch.ts'
import type { openSheetRows } from '../../functions/export/xlsx/sheet.ts'
import type { WorkbookParts } from '../../functions/export/xlsx/workbook.ts'

/** A sheet's header, rows and error cells as a reader gave them, or the code (and message) it failed with. */
export type SheetOutcome =
  | { header: readonly string[]; rows: string[][]; errorCells: { count: number; values: string[] } }
  | { code: string; message?: string }

export type SheetReader = typeof openSheetRows

/** What `reader` makes of the sheet in `pieces`, in batches of a few cells so rows cross batches. */
export const readSheetOutcome = async (
  reader: SheetReader,
  pieces: Buffer[],
  parts: WorkbookParts,
  limits: RecordLimits,
): Promise<SheetOutcome> => {
  try {
    const sheet = await reader(Readable.from(pieces), parts, {
      tableId: 't',
      batchLimits: { maxCells: 7, maxBytes: 64 },
      limits,
    })
    const rows: string[][] = []
    for await (const batch of sheet.batches as AsyncGenerator<RecordBatch>) rows.push(...rowsAsText(batch))
    return { header: sheet.header, rows, errorCells: { ...sheet.errorCells, values: [...sheet.errorCells.values] } }
  } catch (error) {
    const { code, message } = error as { code: string; message: string }
    // Malformed XML is described in each reader's own words; every other failure is the cell layer's, word for word.
    return code === 'XLSX_MALFORMED' ? { code } : { code, message }
  }
}

/** `bytes` cut at the given fractions of its length. */
export const splitAtFractions = (bytes: Buffer, cuts: number[]): Buffer[] => {
  const at = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b)
  const pieces: Buffer[] = []
  let start = 0
  for (const end of [...at, bytes.length]) {
    if (end > start) pieces.push(Buffer.from(bytes.subarray(start, end)))
    start = Math.max(start, end)
  }
  return pieces
}
