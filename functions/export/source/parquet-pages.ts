/**
 * A Parquet column chunk read a page at a time with hyparquet's page reader (page headers, decompression, levels,
 * encodings, dictionaries, conversions), each value written as its CSV field (csv-fields.ts). The pages this
 * exporter writes (v1, PLAIN, dictionaries, deltas) are read into typed arrays with no JS value per cell, so a page
 * that covers a whole row group (a dictionary's indexes) stays small; any other page is read as hyparquet converts it.
 */
import { zstdDecompressSync } from 'node:zlib'
import type { ColumnChunk, DecodedArray, FileMetaData, PageHeader, SchemaElement } from 'hyparquet'
import { parquetSchema } from 'hyparquet'
import { parquetHeader } from 'hyparquet/src/column.js'
import { convert, convertWithDictionary, DEFAULT_PARSERS } from 'hyparquet/src/convert.js'
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js'
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js'
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js'
import { readPlain } from 'hyparquet/src/plain.js'
import { getMaxDefinitionLevel, getTreePath } from 'hyparquet/src/schema.js'
import type { ColumnDecoder } from 'hyparquet/src/types.js'
import { ColumnType } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import { cellText, DAY_MS, type TextOut, writeInstant, writeText } from './csv-fields.ts'

/**
 * zstd into one buffer of the page's size: zlib's default 16 KiB output chunks, joined at the end, were a dozen
 * allocations and a copy per page.
 */
const COMPRESSORS = {
  ZSTD: (input: Uint8Array, size: number) => new Uint8Array(zstdDecompressSync(input, { chunkSize: size + 64 })),
}

/** How a column's stored values become text: the kinds this exporter writes, read lean; anything else as hyparquet converts it. */
const Kind = {
  /** UTF-8 text: copied as bytes. */
  Text: 0,
  /** A 64-bit integer. */
  Integer: 1,
  Double: 2,
  Boolean: 3,
  /** Days since 1970-01-01. */
  Date: 4,
  /** Milliseconds since 1970-01-01. */
  Instant: 5,
  /** hyparquet's converted value, spelt by `cellText`. */
  Converted: 6,
} as const
type Kind = (typeof Kind)[keyof typeof Kind]

const kindOf = ({ type, converted_type: converted, logical_type: logical }: SchemaElement): Kind => {
  if (type === 'BYTE_ARRAY' && (converted ?? 'UTF8') === 'UTF8' && (logical?.type ?? 'STRING') === 'STRING')
    return Kind.Text
  if (type === 'INT32' && converted === 'DATE') return Kind.Date
  if (type === 'INT64' && converted === 'TIMESTAMP_MILLIS') return Kind.Instant
  if (converted !== undefined || logical !== undefined) return Kind.Converted
  if (type === 'INT64') return Kind.Integer
  if (type === 'DOUBLE') return Kind.Double
  if (type === 'BOOLEAN') return Kind.Boolean
  return Kind.Converted
}

const TWO_TO_32 = 2 ** 32
/** Integers of at most 2^53 in magnitude are exact as doubles, and their text is the BigInt's. */
const SAFE_HIGH = 2 ** 21

const EMPTY_VIEW: DataView = new DataView(new ArrayBuffer(8))
const viewOf = (values: DecodedArray): DataView =>
  ArrayBuffer.isView(values) ? new DataView(values.buffer, values.byteOffset, values.byteLength) : EMPTY_VIEW

/** Each dictionary entry's field as first written, to copy from then on. */
class FieldCache {
  #bytes = new Uint8Array(4096)
  #used = 0
  readonly #starts: Int32Array
  readonly #ends: Int32Array

  constructor(entries: number) {
    this.#starts = new Int32Array(entries).fill(-1)
    this.#ends = new Int32Array(entries)
  }

  /** Writes entry `entry`'s field if it is known; false if not. */
  copyTo(out: TextOut, entry: number): boolean {
    const start = this.#starts[entry]!
    if (start < 0) return false
    const length = this.#ends[entry]! - start
    out.room(length)
    const bytes = this.#bytes
    const to = out.bytes
    const at = out.used
    if (length > 32) to.set(bytes.subarray(start, start + length), at)
    else for (let i = 0; i < length; i++) to[at + i] = bytes[start + i]!
    out.used += length
    return true
  }

  keep(entry: number, bytes: Uint8Array, start: number, end: number): void {
    const length = end - start
    if (this.#used + length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.length, this.#used + length))
      grown.set(this.#bytes.subarray(0, this.#used))
      this.#bytes = grown
    }
    this.#bytes.set(bytes.subarray(start, end), this.#used)
    this.#starts[entry] = this.#used
    this.#used += length
    this.#ends[entry] = this.#used
  }
}

/**
 * The arrays a column's pages are decoded into: a page's levels and dictionary indexes (or text lengths) are used
 * until the next page replaces them, so one of each, grown to the largest page, serves every page of the column.
 */
export class PageScratch {
  #levels = new Uint8Array(0)
  #indexes = new Int32Array(0)
  #narrow = new Uint16Array(0)
  #int32 = new Int32Array(0)
  #int64 = new BigInt64Array(0)

  levelsFor(rows: number): Uint8Array {
    if (this.#levels.length < rows) this.#levels = new Uint8Array(rows)
    return this.#levels.subarray(0, rows)
  }

  indexesFor(values: number): Int32Array {
    if (this.#indexes.length < values) this.#indexes = new Int32Array(values)
    return this.#indexes.subarray(0, values)
  }

  /** A delta-packed page's numbers: made for each page, a timestamp column's were a MiB a row group. */
  deltasFor(type: 'INT32' | 'INT64', values: number): Int32Array | BigInt64Array {
    if (type === 'INT32') {
      if (this.#int32.length < values) this.#int32 = new Int32Array(values)
      return this.#int32.subarray(0, values)
    }
    if (this.#int64.length < values) this.#int64 = new BigInt64Array(values)
    return this.#int64.subarray(0, values)
  }

  /** Dictionary indexes of up to 16 bits (a dictionary of a MiB at most has fewer entries): half the room. */
  narrowIndexesFor(values: number): Uint16Array {
    if (this.#narrow.length < values) this.#narrow = new Uint16Array(values)
    return this.#narrow.subarray(0, values)
  }
}

/**
 * One column chunk, read a page at a time. `advance()` moves to each row in turn and says whether it holds a
 * value; `write()` writes that value's text. A page's definition levels and dictionary indexes are decoded into
 * typed arrays, numbers are read from the page where they lie, and text is found by walking its length prefixes as
 * the rows are read: no JS value per cell, so a page covering a whole row group (a dictionary's) stays small.
 */
export class PageCursor {
  readonly #decoder: ColumnDecoder
  readonly #kind: Kind
  readonly #maxLevel: number
  readonly #view: DataView
  readonly #reader: { view: DataView; offset: number }
  #dictionary: DecodedArray | undefined
  /** The dictionary as hyparquet converts it, for a page it reads (see #nextPage). */
  #converted: DecodedArray | undefined
  #page: Uint8Array = new Uint8Array(0)
  #pageView: DataView = new DataView(new ArrayBuffer(8))
  /** Per row of the page, its definition level; empty when every row has a value. */
  #levels: Uint8Array = new Uint8Array(0)
  #rows = 0
  #row = 0
  /** The page's values: dictionary indexes, numbers, text lengths, or hyparquet's converted values. */
  #values: DecodedArray = []
  /** The numbers of #values and of the dictionary, as words: a 64-bit one is read without a BigInt. */
  #valuesView = EMPTY_VIEW
  #dictionaryView = EMPTY_VIEW
  /** The dictionary's entries as written, once spelt. */
  #fields: FieldCache | undefined
  #encoding: 'plain' | 'dictionary' | 'lengths' | 'converted' = 'plain'
  #value = 0
  /** Where the next PLAIN or DELTA_LENGTH text starts in the page. */
  #textAt = 0
  /** The current value: its index in #values or the dictionary, or its text's place in the page. */
  #current = 0
  #currentStart = 0
  #currentLength = 0

  readonly #scratch: PageScratch

  /** `bytes` is the column chunk; `scratch` the arrays its pages are decoded into, reused from chunk to chunk. */
  constructor(bytes: Uint8Array, chunk: ColumnChunk, metadata: FileMetaData, scratch: PageScratch) {
    this.#scratch = scratch
    const meta = chunk.meta_data!
    const schemaPath = getTreePath(parquetSchema(metadata), meta.path_in_schema)
    const element = schemaPath[schemaPath.length - 1]!.element
    this.#decoder = {
      pathInSchema: meta.path_in_schema,
      type: meta.type,
      element,
      schemaPath,
      codec: meta.codec,
      compressors: COMPRESSORS,
      parsers: DEFAULT_PARSERS,
    }
    this.#kind = schemaPath.length === 2 ? kindOf(element) : Kind.Converted
    this.#maxLevel = getMaxDefinitionLevel(schemaPath)
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.#reader = { view: this.#view, offset: 0 }
  }

  /** Moves to the next row; whether it holds a value (which `write` then writes). */
  advance(): boolean {
    while (this.#row >= this.#rows) this.#nextPage()
    const row = this.#row++
    if (this.#levels.length > 0 && this.#levels[row] !== this.#maxLevel) return false
    const value = this.#value++
    if (this.#encoding === 'dictionary') this.#current = this.#values[value] as number
    else this.#current = value
    if (this.#kind === Kind.Text && this.#encoding !== 'dictionary' && this.#encoding !== 'converted') {
      let length: number
      if (this.#encoding === 'lengths') length = this.#values[value] as number
      else {
        length = this.#pageView.getUint32(this.#textAt, true)
        this.#textAt += 4
      }
      this.#currentStart = this.#textAt
      this.#currentLength = length
      this.#textAt += length
    }
    return true
  }

  /** Writes the current value's text, as one quoted field (an instant's date alone for a `date` column). */
  write(out: TextOut, type: ColumnType): void {
    if (this.#encoding === 'converted') {
      out.textField(cellText((this.#values as unknown[])[this.#current], type) ?? '')
    } else if (this.#encoding !== 'dictionary') {
      this.#writeValue(out, this.#values, this.#valuesView, this.#current, type)
    } else {
      // A dictionary's entries repeat: each is spelt once, and copied from then on.
      const entry = this.#current
      this.#fields ??= new FieldCache(this.#dictionary!.length)
      const fields = this.#fields
      if (!fields.copyTo(out, entry)) {
        const start = out.used
        this.#writeValue(out, this.#dictionary!, this.#dictionaryView, entry, type)
        fields.keep(entry, out.bytes, start, out.used)
      }
    }
  }

  #writeValue(out: TextOut, values: DecodedArray, view: DataView, at: number, type: ColumnType): void {
    switch (this.#kind) {
      case Kind.Text: {
        if (this.#encoding === 'dictionary') {
          const bytes = (values as Uint8Array[])[at]!
          writeText(out, bytes, 0, bytes.length)
        } else writeText(out, this.#page, this.#currentStart, this.#currentLength)
        return
      }
      case Kind.Date:
        writeInstant(out, (values as Int32Array)[at]! * DAY_MS, type === ColumnType.DATE)
        return
      case Kind.Instant:
      case Kind.Integer: {
        const high = view.getInt32(8 * at + 4, true)
        const low = view.getUint32(8 * at, true)
        if (this.#kind === Kind.Instant) writeInstant(out, high * TWO_TO_32 + low, type === ColumnType.DATE)
        else if (high >= -SAFE_HIGH && high < SAFE_HIGH) out.textField(String(high * TWO_TO_32 + low))
        else out.textField(String(view.getBigInt64(8 * at, true)))
        return
      }
      case Kind.Double:
        out.textField(cellText((values as Float64Array)[at]!, type)!)
        return
      case Kind.Boolean:
        out.textField((values as boolean[])[at] ? 'true' : 'false')
        return
      default:
        out.textField(cellText((values as unknown[])[at], type) ?? '')
    }
  }

  #nextPage(): void {
    if (this.#reader.offset >= this.#view.byteLength)
      throw new InternalError({ reason: `column ${this.#decoder.pathInSchema[0]} ends before its rows` })
    const header = parquetHeader(this.#reader)
    const start = this.#reader.offset
    this.#reader.offset += header.compressed_page_size
    const compressed = new Uint8Array(this.#view.buffer, this.#view.byteOffset + start, header.compressed_page_size)
    if (header.type === 'DICTIONARY_PAGE') {
      const page = this.#decompress(compressed, header)
      const reader = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 }
      const count = header.dictionary_page_header!.num_values
      const raw = readPlain(reader, this.#decoder.type, count, this.#decoder.element.type_length)
      this.#dictionary = this.#kind === Kind.Converted ? convert(raw, this.#decoder) : raw
      this.#dictionaryView = viewOf(this.#dictionary)
      this.#fields = undefined
      return
    }
    this.#row = 0
    this.#value = 0
    if (header.type === 'DATA_PAGE' && this.#kind !== Kind.Converted && this.#leanPage(compressed, header)) return
    // Any other page (v2, an encoding this exporter does not write): hyparquet's values, converted.
    const v2 = header.type === 'DATA_PAGE_V2'
    if (!v2 && header.type !== 'DATA_PAGE')
      throw new InternalError({ reason: `unexpected ${header.type} page in column ${this.#decoder.pathInSchema[0]}` })
    const { definitionLevels, dataPage } = v2
      ? readDataPageV2(compressed, header, this.#decoder)
      : readDataPage(this.#decompress(compressed, header), header.data_page_header!, this.#decoder)
    const encoding = v2 ? header.data_page_header_v2!.encoding : header.data_page_header!.encoding
    // A dictionary kept raw for the lean pages is converted for these, as hyparquet converts its values.
    if (this.#kind !== Kind.Converted && this.#dictionary !== undefined && this.#converted === undefined)
      this.#converted = convert(this.#dictionary, this.#decoder)
    const dictionary = this.#kind === Kind.Converted ? this.#dictionary : this.#converted
    this.#values = convertWithDictionary(dataPage, dictionary, encoding, this.#decoder)
    this.#levels = Uint8Array.from(definitionLevels ?? [])
    this.#rows = v2 ? header.data_page_header_v2!.num_rows : header.data_page_header!.num_values
    this.#encoding = 'converted'
  }

  /** Reads a v1 page in the encodings this exporter writes; false for any other, left to hyparquet. */
  #leanPage(compressed: Uint8Array, header: PageHeader): boolean {
    const { num_values: rows, encoding } = header.data_page_header!
    const type = this.#decoder.type
    const dictionary = encoding === 'RLE_DICTIONARY' || encoding === 'PLAIN_DICTIONARY'
    const deltas = encoding === 'DELTA_BINARY_PACKED' && (type === 'INT32' || type === 'INT64')
    const lengths = encoding === 'DELTA_LENGTH_BYTE_ARRAY' && type === 'BYTE_ARRAY'
    if (!(dictionary || deltas || lengths || encoding === 'PLAIN')) return false
    if (dictionary && this.#dictionary === undefined) return false
    const page = this.#decompress(compressed, header)
    const view = new DataView(page.buffer, page.byteOffset, page.byteLength)
    const reader = { view, offset: 0 }
    let present = rows
    this.#levels = new Uint8Array(0)
    if (this.#maxLevel > 0) {
      const levels = this.#scratch.levelsFor(rows)
      readRleBitPackedHybrid(reader, 32 - Math.clz32(this.#maxLevel), levels)
      present = 0
      for (let i = 0; i < rows; i++) if (levels[i] === this.#maxLevel) present++
      if (present < rows) this.#levels = levels
    }
    this.#page = page
    this.#pageView = view
    this.#rows = rows
    if (dictionary) {
      const width = view.getUint8(reader.offset++)
      // hyparquet's decoder writes into any array of numbers; its type lists only the ones it makes.
      const indexes = (
        width <= 16 ? this.#scratch.narrowIndexesFor(present) : this.#scratch.indexesFor(present)
      ) as Int32Array
      // Width 0: every value is the dictionary's one entry.
      if (width > 0) readRleBitPackedHybrid(reader, width, indexes, view.byteLength - reader.offset)
      else indexes.fill(0)
      this.#values = indexes
      this.#encoding = 'dictionary'
    } else if (deltas) {
      const numbers = this.#scratch.deltasFor(type, present)
      deltaBinaryUnpack(reader, present, numbers)
      this.#values = numbers
      this.#encoding = 'plain'
    } else if (lengths) {
      const sizes = this.#scratch.indexesFor(present)
      deltaBinaryUnpack(reader, present, sizes)
      this.#values = sizes
      this.#textAt = reader.offset
      this.#encoding = 'lengths'
    } else if (type === 'BYTE_ARRAY') {
      this.#textAt = reader.offset
      this.#encoding = 'plain'
    } else {
      this.#values = readPlain(reader, type, present, this.#decoder.element.type_length)
      this.#encoding = 'plain'
    }
    this.#valuesView = viewOf(this.#values)
    return true
  }

  #decompress(compressed: Uint8Array, header: PageHeader): Uint8Array {
    return decompressPage(compressed, header.uncompressed_page_size, this.#decoder.codec, COMPRESSORS)
  }
}
