/**
 * Encode stage, column level: one column chunk from its PLAIN values, in the encoding that measures smallest
 * (encoding-choice.ts: a dictionary page and indexes, PLAIN, or deltas), as v1 data pages. In a v1 page the definition levels are compressed together with the values, which
 * is what makes sparse columns nearly free. The format's building blocks (page headers, the RLE/bit-packed
 * hybrid, delta packing, the byte writer) are hyparquet-writer's; this file only decides what goes where.
 */
import type { ColumnChunk, Encoding, PageHeader, ParquetType } from 'hyparquet'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { writePageHeader } from 'hyparquet-writer/src/datapage.js'
import { writeRleBitPackedHybrid } from 'hyparquet-writer/src/encoding.js'
import type { ChunkValues } from './chunk-values.ts'
import { buildDictionary, type Dictionary } from './dictionary.ts'
import { chooseEncoding, type PageCodec, type ValueEncoding, writeEncodedValues } from './encoding-choice.ts'

export type { PageCodec } from './encoding-choice.ts'

/** Pages as they are: for chunks the codec would make larger. */
const UNCOMPRESSED: PageCodec = { name: 'UNCOMPRESSED', compress: (bytes) => bytes.slice() }

/** Bytes of encoded values per data page, as parquet-mr's default `parquet.page.size`. */
const PAGE_BYTES = 1024 * 1024

interface Page {
  readonly firstRow: number
  readonly rows: number
  readonly firstValue: number
  readonly values: number
}

/**
 * The body of the page being written; reused, since its bytes are compressed (copied) before the next page and
 * a chunk is written synchronously, so tables encoded side by side never share it mid-page.
 */
const scratch = new ByteWriter(PAGE_BYTES + 64 * 1024)
/** The same page's body in the other encoding, where a page is tried in two (byte arrays without a dictionary). */
const alternative = new ByteWriter(PAGE_BYTES + 64 * 1024)

/** Starts a v1 page body: the definition levels (RLE, bit width 1) with their byte length in front. */
const startBody = (body: ByteWriter, values: ChunkValues, page: Page): ByteWriter => {
  body.index = 0
  body.offset = 0
  body.appendUint32(0)
  const levels = writeRleBitPackedHybrid(body, values.defined.subarray(page.firstRow, page.firstRow + page.rows), 1)
  body.view.setUint32(0, levels, true)
  return body
}

/**
 * Splits the chunk's rows into pages of about PAGE_BYTES of values. `cost` is every value's encoded size in bytes
 * (fractions for bits), or the starts of byte arrays whose differences are. A number or an array rather than a
 * function per kind of chunk: a call per row to one of several closures was not inlined.
 */
const splitPages = (values: ChunkValues, cost: number | Int32Array): Page[] => {
  const pages: Page[] = []
  const { defined, rows } = values
  let firstRow = 0
  let firstValue = 0
  let value = 0
  let bytes = 0
  for (let row = 0; row < rows; row++) {
    if (defined[row] === 0) continue
    bytes += typeof cost === 'number' ? cost : cost[value + 1]! - cost[value]!
    value++
    if (bytes >= PAGE_BYTES) {
      pages.push({ firstRow, rows: row + 1 - firstRow, firstValue, values: value - firstValue })
      firstRow = row + 1
      firstValue = value
      bytes = 0
    }
  }
  if (firstRow < rows || pages.length === 0) {
    pages.push({ firstRow, rows: rows - firstRow, firstValue, values: value - firstValue })
  }
  return pages
}

const valueCost = (
  values: ChunkValues,
  encoding: ValueEncoding,
  dictionary: Dictionary | undefined,
): number | Int32Array => {
  if (values.hint === 'sequence') return 0.01
  if (encoding === 'RLE_DICTIONARY' && dictionary) return Math.max(1, dictionary.bitWidth) / 8
  const { starts, width } = values
  if (starts) return starts
  // Booleans: an eighth of a byte each, so a page holds a multiple of 8 values and starts on a whole byte.
  return width === 0 ? 1 / 8 : width
}

/** Writes a page: its header, then its compressed body. Returns its uncompressed size, header included. */
const writePage = (
  writer: ByteWriter,
  header: Omit<PageHeader, 'compressed_page_size'>,
  bodyBytes: number,
  compressed: Uint8Array,
): number => {
  const headerStart = writer.offset
  writePageHeader(writer, { ...header, compressed_page_size: compressed.length })
  const headerBytes = writer.offset - headerStart
  writer.appendBytes(compressed)
  return headerBytes + bodyBytes
}

/**
 * What a column's earlier chunks chose, so a chunk between two measurements is written without measuring again:
 * `byteArrays`, how strings without a dictionary were written (measured page by page, PLAIN against
 * DELTA_LENGTH_BYTE_ARRAY, when undefined); `whole`, the encoding the last whole-chunk measurement chose, taken
 * where this chunk would be measured whole too (a dictionary past a sample's sight).
 */
export interface KnownChoices {
  readonly byteArrays?: 'PLAIN' | 'DELTA_LENGTH_BYTE_ARRAY' | undefined
  readonly whole?: ValueEncoding | undefined
}

/** A chunk's footer metadata, and the encoding its whole-chunk measurement chose when it had one. */
export interface WrittenChunk {
  readonly chunk: ColumnChunk
  readonly measuredWhole?: ValueEncoding
}

/** A data page encoded and compressed, not yet written. */
interface EncodedPage {
  readonly rows: number
  readonly encoding: Encoding
  readonly bodyBytes: number
  readonly compressed: Uint8Array
}

/**
 * The chunk's data pages in `encoding`, compressed. Strings without a dictionary are tried page by page in PLAIN and
 * in delta lengths when `tryDeltaLengths`, the smaller kept.
 */
const encodePages = (
  values: ChunkValues,
  encoding: ValueEncoding,
  dictionary: Dictionary | undefined,
  codec: PageCodec,
  tryDeltaLengths: boolean,
): { pages: EncodedPage[]; bytes: number } => {
  const pages: EncodedPage[] = []
  let bytes = 0
  for (const page of splitPages(values, valueCost(values, encoding, dictionary))) {
    let body = startBody(scratch, values, page)
    writeEncodedValues(body, values, encoding, dictionary, page.firstValue, page.values)
    let pageEncoding: Encoding = encoding
    let compressed = codec.compress(body.getBytes())
    if (tryDeltaLengths) {
      const other = startBody(alternative, values, page)
      writeEncodedValues(other, values, 'DELTA_LENGTH_BYTE_ARRAY', undefined, page.firstValue, page.values)
      const otherCompressed = codec.compress(other.getBytes())
      if (otherCompressed.length < compressed.length) {
        body = other
        compressed = otherCompressed
        pageEncoding = 'DELTA_LENGTH_BYTE_ARRAY'
      }
    }
    pages.push({ rows: page.rows, encoding: pageEncoding, bodyBytes: body.index, compressed })
    bytes += compressed.length
  }
  return { pages, bytes }
}

/**
 * Writes one column chunk of `type` at the writer's offset and returns its metadata for the footer: min, max and
 * NULL count statistics, and the encodings and page kinds it used.
 */
export const writeColumnChunk = (
  writer: ByteWriter,
  name: string,
  type: ParquetType,
  values: ChunkValues,
  codec: PageCodec,
  known: KnownChoices = {},
): WrittenChunk => {
  const { byteArrays, whole } = known
  const chunkStart = writer.offset
  const built = buildDictionary(values)
  const choice = chooseEncoding(values, type === 'INT32' || type === 'INT64', built, codec, scratch)
  // Strings without a dictionary: each page in PLAIN and in delta lengths, the smaller kept, unless already known.
  const strings = values.starts !== undefined && values.count > 0
  const written = (encoding: ValueEncoding, pageCodec = codec) => {
    const plainStrings = strings && encoding === 'PLAIN'
    const chosen: ValueEncoding = plainStrings && byteArrays ? byteArrays : encoding
    return encodePages(values, chosen, built, pageCodec, plainStrings && byteArrays === undefined)
  }
  let encoding = choice.encoding
  let dictionaryPage = choice.dictionaryPage
  let encoded: { pages: EncodedPage[]; bytes: number } | undefined
  let measuredWhole: ValueEncoding | undefined
  if (choice.measureWhole && built && whole !== undefined && choice.measureWhole.includes(whole)) {
    encoding = whole
  } else if (choice.measureWhole && built) {
    // Each candidate in full, its pages as they would be written; a dictionary's page counts with its indexes.
    dictionaryPage = codec.compress(built.page)
    for (const candidate of choice.measureWhole) {
      const attempt = written(candidate)
      const bytes = attempt.bytes + (candidate === 'RLE_DICTIONARY' ? dictionaryPage.length : 0)
      const best = encoded && encoded.bytes + (encoding === 'RLE_DICTIONARY' ? dictionaryPage.length : 0)
      if (best === undefined || bytes < best) {
        encoded = attempt
        encoding = candidate
      }
    }
    measuredWhole = encoding
  }
  encoded ??= written(encoding)
  const dictionary = encoding === 'RLE_DICTIONARY' ? built : undefined
  // A chunk the codec makes larger (a constant column's few bytes a group, which zstd's frame headers outweigh)
  // is written uncompressed: the codec is the chunk's to name, and every reader reads UNCOMPRESSED.
  let chunkCodec = codec
  if (dictionary) dictionaryPage ??= codec.compress(dictionary.page)
  const rawBytes = encoded.pages.reduce((sum, page) => sum + page.bodyBytes, 0) + (dictionary?.page.length ?? 0)
  const packedBytes = encoded.bytes + (dictionary ? dictionaryPage!.length : 0)
  if (rawBytes < packedBytes && codec.name !== 'UNCOMPRESSED') {
    chunkCodec = UNCOMPRESSED
    encoded = written(encoding, UNCOMPRESSED)
    if (dictionary) dictionaryPage = dictionary.page
  }
  let uncompressed = 0
  let dictionaryPageOffset: bigint | undefined
  if (dictionary) {
    dictionaryPageOffset = BigInt(writer.offset)
    uncompressed += writePage(
      writer,
      {
        type: 'DICTIONARY_PAGE',
        uncompressed_page_size: dictionary.page.length,
        dictionary_page_header: { num_values: dictionary.size, encoding: 'PLAIN' },
      },
      dictionary.page.length,
      dictionaryPage ?? chunkCodec.compress(dictionary.page),
    )
  }
  const dataPageOffset = BigInt(writer.offset)
  const pagesBy = new Map<Encoding, number>()
  for (const page of encoded.pages) {
    pagesBy.set(page.encoding, (pagesBy.get(page.encoding) ?? 0) + 1)
    uncompressed += writePage(
      writer,
      {
        type: 'DATA_PAGE',
        uncompressed_page_size: page.bodyBytes,
        data_page_header: {
          num_values: page.rows,
          encoding: page.encoding,
          definition_level_encoding: 'RLE',
          repetition_level_encoding: 'RLE',
        },
      },
      page.bodyBytes,
      page.compressed,
    )
  }
  const { min, max } = values
  const chunk: ColumnChunk = {
    file_offset: BigInt(chunkStart),
    meta_data: {
      type,
      encodings: dictionary ? ['PLAIN', 'RLE', 'RLE_DICTIONARY'] : ['RLE', ...pagesBy.keys()],
      path_in_schema: [name],
      codec: chunkCodec.name,
      num_values: BigInt(values.rows),
      total_uncompressed_size: BigInt(uncompressed),
      total_compressed_size: BigInt(writer.offset - chunkStart),
      data_page_offset: dataPageOffset,
      ...(dictionaryPageOffset === undefined ? {} : { dictionary_page_offset: dictionaryPageOffset }),
      statistics: {
        null_count: BigInt(values.rows - values.count),
        ...(min === undefined || max === undefined ? {} : { min_value: min, max_value: max }),
      },
      encoding_stats: [
        ...(dictionary ? [{ page_type: 'DICTIONARY_PAGE' as const, encoding: 'PLAIN' as const, count: 1 }] : []),
        ...[...pagesBy].map(([pageEncoding, count]) => ({
          page_type: 'DATA_PAGE' as const,
          encoding: pageEncoding,
          count,
        })),
      ],
    },
  }
  return measuredWhole === undefined ? { chunk } : { chunk, measuredWhole }
}
