/**
 * Which encoding a column chunk's values are written in, chosen by measurement: a sample of the chunk is encoded
 * under each candidate the chunk's type allows and compressed with the page codec, and the smallest wins; where
 * the dictionary is too large for a sample to see the chunk's repetition, the candidates' whole pages are. A rule
 * cannot tell ahead of the codec which is smaller: zstd shrinks PLAIN two-decimal doubles and unsorted timestamps
 * below their dictionary indexes or deltas on some columns and not on others (docs/performance.md#encodings).
 * Candidates are those Athena's engine can be shown to read: PLAIN, a dictionary (RLE_DICTIONARY) and, for INT32
 * and INT64, DELTA_BINARY_PACKED. Strings written without a dictionary are also tried as DELTA_LENGTH_BYTE_ARRAY,
 * page by page and in full (column-chunk.ts): on samples, zstd's gain on PLAIN strings grows with the page, and
 * the two were misjudged (host names rising by number came out 7% larger as deltas when chosen on a sample).
 */
import type { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { deltaBinaryPack } from 'hyparquet-writer/src/delta.js'
import { writeRleBitPackedHybrid } from 'hyparquet-writer/src/encoding.js'
import type { ChunkValues } from './chunk-values.ts'
import { deltaBinaryPackInt64, deltaBinaryPackSequence } from './delta-int64.ts'
import type { Dictionary } from './dictionary.ts'

export type ValueEncoding = 'PLAIN' | 'RLE_DICTIONARY' | 'DELTA_BINARY_PACKED' | 'DELTA_LENGTH_BYTE_ARRAY'

export interface PageCodec {
  readonly name: 'ZSTD' | 'SNAPPY' | 'UNCOMPRESSED'
  readonly compress: (bytes: Uint8Array) => Uint8Array
}

/** Values per sampled window; whole windows keep the runs and neighbours that deltas and the codec feed on. */
const WINDOW = 1024
/** Windows per sample: spread over the chunk, so a table sorted in stretches is sampled in several of them. */
const WINDOWS = 4
/**
 * Dictionary entries beyond which a window is too short to see the chunk's repetition: with more distinct values
 * than a quarter of a window, most of a window's values occur in it once, while the chunk repeats each of them
 * many times, which zstd finds in PLAIN pages and deltas as well. Such a chunk's candidates are measured on its
 * whole pages (column-chunk.ts). Sampled, values drawn at random from 4,000 came out 1.2 x DuckDB's bytes, and
 * names cycling through 1,098 in order 2.4 x, as a dictionary where PLAIN was a tenth of the size (bench/shapes.ts).
 */
const SAMPLED_ENTRIES = WINDOW / 4

/** The INT32 or INT64 values of a fixed-width integer chunk, as delta packing takes them. */
export const integersOf = (values: ChunkValues): Int32Array | BigInt64Array => {
  const { plain, width, count } = values
  // Chunk values start their buffer (chunk-scratch.ts), so aligned; a copy keeps any other caller correct.
  const aligned = plain.byteOffset % 8 === 0 ? plain : plain.slice()
  return width === 4
    ? new Int32Array(aligned.buffer, aligned.byteOffset, count)
    : new BigInt64Array(aligned.buffer, aligned.byteOffset, count)
}

/**
 * Byte arrays as DELTA_LENGTH_BYTE_ARRAY: their lengths delta-packed, then their bytes back to back, so the codec
 * sees the strings without a length prefix between each two.
 */
const writeDeltaLengths = (body: ByteWriter, plain: Uint8Array, starts: Int32Array, first: number, count: number) => {
  const lengths = new Int32Array(count)
  for (let i = 0; i < count; i++) lengths[i] = starts[first + i + 1]! - starts[first + i]! - 4
  deltaBinaryPack(body, lengths, 'INT32')
  // The values' bytes in one copy loop rather than an appendBytes (and a subarray) per value.
  const total = starts[first + count]! - starts[first]! - 4 * count
  body.ensure(total)
  const out = new Uint8Array(body.buffer, body.index, total)
  let at = 0
  for (let i = 0; i < count; i++) {
    const end = starts[first + i + 1]!
    for (let b = starts[first + i]! + 4; b < end; b++) out[at++] = plain[b]!
  }
  body.index += total
  body.offset += total
}

/** Writes values `first` to `first + count` of the chunk in `encoding` (without definition levels). */
export const writeEncodedValues = (
  body: ByteWriter,
  values: ChunkValues,
  encoding: ValueEncoding,
  dictionary: Dictionary | undefined,
  first: number,
  count: number,
): void => {
  if (values.hint === 'sequence') {
    deltaBinaryPackSequence(body, Number(values.min ?? 1) + first, count)
  } else if (encoding === 'RLE_DICTIONARY' && dictionary) {
    body.appendUint8(dictionary.bitWidth)
    writeRleBitPackedHybrid(body, dictionary.indexes.subarray(first, first + count), dictionary.bitWidth)
  } else if (encoding === 'DELTA_BINARY_PACKED') {
    const integers = integersOf(values).subarray(first, first + count)
    if (integers instanceof BigInt64Array) deltaBinaryPackInt64(body, integers)
    else deltaBinaryPack(body, integers, 'INT32')
  } else if (encoding === 'DELTA_LENGTH_BYTE_ARRAY' && values.starts) {
    writeDeltaLengths(body, values.plain, values.starts, first, count)
  } else if (values.starts) {
    body.appendBytes(values.plain.subarray(values.starts[first], values.starts[first + count]))
  } else if (values.width === 0) {
    body.appendBytes(values.plain.subarray(first / 8, Math.ceil((first + count) / 8)))
  } else {
    body.appendBytes(values.plain.subarray(first * values.width, (first + count) * values.width))
  }
}

/** The encodings `values` may be written in: PLAIN always, a dictionary where one was built, deltas for integers. */
const candidates = (values: ChunkValues, integer: boolean, dictionary: Dictionary | undefined): ValueEncoding[] => [
  ...(dictionary ? (['RLE_DICTIONARY'] as const) : []),
  'PLAIN',
  ...(integer && values.width !== 0 ? (['DELTA_BINARY_PACKED'] as const) : []),
]

/** The first value of each sampled window: the whole chunk when it is small. */
const windowsOf = (count: number): number[] => {
  if (count <= WINDOW * WINDOWS) return [0]
  const stride = Math.floor((count - WINDOW) / (WINDOWS - 1))
  return Array.from({ length: WINDOWS }, (_, i) => i * stride)
}

/**
 * The encoding `values` take least room in once compressed by `codec`. `integer` is true for INT32 and INT64
 * columns (not DOUBLE, whose deltas are not defined). `scratch` is reused for the samples' bodies. A dictionary's
 * page is counted whole (compressed once, here), its indexes like the other candidates' values. Where a sample
 * cannot see the chunk's repetition, `measureWhole` lists the candidates, for the caller to encode each in full.
 */
export const chooseEncoding = (
  values: ChunkValues,
  integer: boolean,
  dictionary: Dictionary | undefined,
  codec: PageCodec,
  scratch: ByteWriter,
): { encoding: ValueEncoding; dictionaryPage?: Uint8Array; measureWhole?: readonly ValueEncoding[] } => {
  if (values.hint === 'sequence') return { encoding: 'DELTA_BINARY_PACKED' }
  if (values.hint === 'constant' && dictionary) return { encoding: 'RLE_DICTIONARY' }
  // A hash's deltas need its full 64 bits and the codec finds nothing in either, so deltas cannot win; measuring
  // them packed BigInts (values past 2^52) for 4 windows a row group, a tenth of the main thread's allocations.
  if (values.hint === 'hash') return { encoding: 'PLAIN' }
  const options = candidates(values, integer, dictionary)
  if (options.length === 1) return { encoding: options[0]! }
  const starts = windowsOf(values.count)
  if (dictionary && dictionary.size > SAMPLED_ENTRIES && starts.length > 1) {
    return { encoding: 'RLE_DICTIONARY', measureWhole: options }
  }
  const length = Math.min(values.count, starts.length === 1 ? values.count : WINDOW)
  const scale = values.count / (length * starts.length)
  let best: ValueEncoding = 'PLAIN'
  let bestBytes = Number.POSITIVE_INFINITY
  let dictionaryPage: Uint8Array | undefined
  for (const encoding of options) {
    let bytes = 0
    for (const first of starts) {
      scratch.index = 0
      scratch.offset = 0
      writeEncodedValues(scratch, values, encoding, dictionary, first, length)
      bytes += codec.compress(scratch.getBytes()).length
    }
    bytes *= scale
    if (encoding === 'RLE_DICTIONARY' && dictionary) {
      dictionaryPage = codec.compress(dictionary.page)
      bytes += dictionaryPage.length
    }
    if (bytes < bestBytes) {
      best = encoding
      bestBytes = bytes
    }
  }
  return best === 'RLE_DICTIONARY' && dictionaryPage ? { encoding: best, dictionaryPage } : { encoding: best }
}
