/**
 * How history operations read a date back before source/parquet-text.ts: hyparquet's `parquetRead` of each whole
 * row group as rows of JS values, each cell spelt by `cellText`, the rows joined as CSV text. Kept as the reference
 * the row-slice reader is compared with, byte for byte (test/unit/source/parquet-text.test.ts).
 */
import { zstdDecompressSync } from 'node:zlib'
import { type AsyncBuffer, type FileMetaData, parquetRead } from 'hyparquet'
import { cellText } from '../../functions/export/source/csv-fields.ts'
import type { TextColumn, TextFilter } from '../../functions/export/source/parquet-text.ts'

const COMPRESSORS = { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) }

const csvField = (text: string | undefined): string =>
  text === undefined || text === '' ? '' : `"${text.replace(/"/g, '""')}"`

/** The CSV records of every row of the file, and the rows the filters left out. */
export const referenceRecords = async (
  file: AsyncBuffer,
  metadata: FileMetaData,
  columns: readonly TextColumn[],
  filters: readonly TextFilter[],
): Promise<{ text: Buffer; removed: number }> => {
  const read = [...columns.map((c) => c.name), ...columns.flatMap((c) => (c.companion ? [c.companion] : []))]
  const at = new Map(read.map((name, i) => [name, i]))
  let text = ''
  let removed = 0
  let rowStart = 0
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows)
    let rows: unknown[][] = []
    await parquetRead({
      file,
      metadata,
      columns: read,
      rowStart,
      rowEnd,
      rowFormat: 'array',
      compressors: COMPRESSORS,
      onComplete: (done: unknown[][]) => {
        rows = done
      },
    })
    rowStart = rowEnd
    for (const row of rows) {
      const cells = columns.map((column) => {
        const kept = column.companion === undefined ? undefined : row[at.get(column.companion)!]
        return kept === null || kept === undefined ? cellText(row[at.get(column.name)!], column.type) : String(kept)
      })
      if (filters.length > 0 && filters.every((f) => f.index >= 0 && f.matches(cells[f.index] ?? ''))) {
        removed++
        continue
      }
      text += `${cells.map(csvField).join(',')}\n`
    }
  }
  return { text: Buffer.from(text), removed }
}
