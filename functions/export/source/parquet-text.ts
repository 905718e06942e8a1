/**
 * A Parquet file this exporter wrote, back as the CSV text the table's path reads (for history operations,
 * warehouse-source.ts), in slices of rows: each column chunk is read page by page with hyparquet's own page reader
 * (parquet-pages.ts), and each cell is written as bytes in the spelling `cellText` gives its value (csv-fields.ts).
 * No row group is decoded whole: memory holds the group's compressed column chunks and one page per column as
 * typed arrays, where hyparquet's `parquetRead` of a group of 122,880 rows made a JS value of every cell at once
 * (the 30-date rewrite of a 100 MB table peaked at 426 MiB).
 */
import type { ColumnChunk, FileMetaData } from 'hyparquet'
import { ColumnType } from '../core/constants.ts'
import { CHUNK_BYTES, TextOut } from './csv-fields.ts'
import { PageCursor, PageScratch } from './parquet-pages.ts'

/** A column the text is made of: its stored name, its registry type, and the companion that holds its misfits. */
export interface TextColumn {
  readonly name: string
  readonly type: ColumnType
  /** The `<name>__text` column: where it holds a value, that text stands for the cell. */
  readonly companion?: string | undefined
}

/** Rows to leave out: each entry's column (an index of the text columns) holds a text it matches. */
export interface TextFilter {
  readonly index: number
  readonly matches: (text: string) => boolean
}

/** Rows a slice covers: small enough that a slice's values die young, large enough to cost nothing per slice. */
const SLICE_ROWS = 4096

interface Column {
  readonly type: ColumnType
  readonly value: PageCursor
  readonly companion: PageCursor | undefined
}

/** Writes one cell: its companion's text where that holds one, else its value's, else nothing (NULL). */
const writeCell = (out: TextOut, { type, value, companion }: Column): void => {
  const kept = companion?.advance() ?? false
  const present = value.advance()
  if (kept) companion!.write(out, ColumnType.STRING)
  else if (present) value.write(out, type)
}

/** The text of the field at `start` to `end` of the output ('' for an empty field), as a filter sees it. */
const fieldText = (out: TextOut, start: number, end: number): string => {
  // A field holding a quote is always quoted, so a field that starts with one is a quoted field.
  if (end === start || out.bytes[start] !== 0x22) return out.bytes.toString('utf8', start, end)
  return out.bytes.toString('utf8', start + 1, end - 1).replaceAll('""', '"')
}

export interface CsvReadBack {
  /** Reads the file's bytes from `position` into all of `target`. */
  readonly readAt: (target: Uint8Array, position: number) => Promise<void>
  readonly metadata: FileMetaData
  readonly columns: readonly TextColumn[]
  readonly filters: readonly TextFilter[]
  /** Checked between slices: the read stops once it says so. */
  readonly cancelled: () => boolean
  /** Told of each row a filter left out. */
  readonly onRemoved: () => void
}

/** Where a column chunk's bytes are in the file: from its first page (the dictionary, if any) on. */
const chunkRange = (chunk: ColumnChunk): [number, number] => {
  const meta = chunk.meta_data!
  const start = Number(meta.dictionary_page_offset || meta.data_page_offset)
  return [start, start + Number(meta.total_compressed_size)]
}

/** Group buffers of reads that ended, for the next: at most one per read running at once. */
const spareGroupBytes: Uint8Array[] = []

/** The rows of every row group as CSV records, in chunks of about a MiB (the header is the caller's). */
export async function* csvRecords(read: CsvReadBack): AsyncGenerator<Buffer> {
  const { metadata, filters } = read
  const out = new TextOut()
  // A filter on a column the file does not have matches no row.
  const matchable = filters.every((f) => f.index >= 0)
  const filtered = new Set(matchable ? filters.map((f) => f.index) : [])
  const strings: string[] = new Array(read.columns.length).fill('')
  const starts = new Int32Array(read.columns.length)
  const ends = new Int32Array(read.columns.length)
  // The column chunks of a group are read into one buffer, reused by every group and by the next date's read (one
  // made for each date was 4-6 MiB more for the collector), as each column's page arrays are.
  let groupBytes = spareGroupBytes.pop() ?? new Uint8Array(0)
  try {
    const scratch = new Map<string, PageScratch>()
    for (const group of metadata.row_groups) {
      const byName = new Map(group.columns.map((chunk) => [chunk.meta_data!.path_in_schema[0]!, chunk]))
      const names = read.columns.flatMap((c) => (c.companion === undefined ? [c.name] : [c.name, c.companion]))
      const ranges = names.map((name) => chunkRange(byName.get(name)!))
      const first = Math.min(...ranges.map(([start]) => start))
      const size = Math.max(...ranges.map(([, end]) => end)) - first
      if (groupBytes.length < size) groupBytes = new Uint8Array(Math.ceil(size * 1.25))
      if (names.length > 0) await read.readAt(groupBytes.subarray(0, size), first)
      const cursors = new Map(
        names.map((name, i) => {
          const [start, end] = ranges[i]!
          if (!scratch.has(name)) scratch.set(name, new PageScratch())
          const bytes = groupBytes.subarray(start - first, end - first)
          return [name, new PageCursor(bytes, byName.get(name)!, metadata, scratch.get(name)!)]
        }),
      )
      const columns: Column[] = read.columns.map((column) => ({
        type: column.type,
        value: cursors.get(column.name)!,
        companion: column.companion === undefined ? undefined : cursors.get(column.companion),
      }))
      const rows = Number(group.num_rows)
      for (let sliceStart = 0; sliceStart < rows; sliceStart += SLICE_ROWS) {
        if (read.cancelled()) return
        for (let row = sliceStart; row < Math.min(rows, sliceStart + SLICE_ROWS); row++) {
          const rowStart = out.used
          for (let c = 0; c < columns.length; c++) {
            if (c > 0) out.byte(0x2c)
            starts[c] = out.used
            writeCell(out, columns[c]!)
            ends[c] = out.used
          }
          if (matchable && filtered.size > 0) {
            for (const c of filtered) strings[c] = fieldText(out, starts[c]!, ends[c]!)
            if (filters.every((f) => f.matches(strings[f.index]!))) {
              out.used = rowStart
              read.onRemoved()
              continue
            }
          }
          out.byte(0x0a)
          // A chunk per MiB of text, whatever the rows' width.
          if (out.used >= CHUNK_BYTES) yield out.take()
        }
      }
    }
  } finally {
    spareGroupBytes.push(groupBytes)
  }

  if (out.used > 0) yield out.take()
}
