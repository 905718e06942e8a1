/**
 * Decode stage: raw body bytes in, UTF-8 bytes out (what csv-parse reads fastest).
 * A UTF-8 BOM is stripped; a UTF-16 BOM selects UTF-16 LE/BE; otherwise the table's `encoding` applies, then the
 * charset the answer declared (its Content-Type's), then UTF-8.
 * UTF-8 input is validated without decoding it (`buffer.isUtf8` on whole-sequence chunks), so the common case
 * costs one native scan per chunk.
 */
import { isUtf8 } from 'node:buffer'
import { DataError, quotePrefix } from '../core/errors.ts'

export interface DecodeOptions {
  readonly tableId: string
  /** The table's `encoding`: used when the body has no BOM, over any declared charset (a WHATWG label). */
  readonly encoding?: string | undefined
  /** The charset the source declared (the Content-Type's, or the one the archiving run read); a label or any text. */
  readonly charset?: string | undefined
  readonly invalidBytes: 'fail' | 'replace'
}

export interface DecodeReport {
  /** Encoding actually used. */
  encoding: string
  bom: boolean
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const
/** Without a BOM, a table encoding or a declared charset. */
export const DEFAULT_ENCODING = 'utf-8'

/** The encoding of a body without a BOM; a declared charset this runtime cannot decode fails coded, naming it. */
const textEncoding = (options: DecodeOptions): string => {
  if (options.encoding !== undefined) return options.encoding
  if (options.charset === undefined) return DEFAULT_ENCODING
  try {
    // The WHATWG name: "iso-8859-1" and "latin1" read as windows-1252, as browsers read them.
    return new TextDecoder(options.charset).encoding
  } catch {
    throw new DataError('INVALID_ENCODING', {
      tableId: options.tableId,
      reason: `the service declared charset ${quotePrefix(options.charset)} in its Content-Type, which the exporter cannot decode`,
      hint: 'set the table\'s "encoding" to the encoding the file really has (a WHATWG label such as "windows-1252"); the previous data is kept',
    })
  }
}

const isUtf8Label = (label: string): boolean => ['utf-8', 'utf8', 'unicode-1-1-utf-8'].includes(label.toLowerCase())

/** Decodes `source` to UTF-8 chunks; fills `report` once the BOM has been seen. */
export async function* decodeToUtf8(
  source: AsyncIterable<Buffer>,
  options: DecodeOptions,
  report: DecodeReport = { encoding: options.encoding ?? DEFAULT_ENCODING, bom: false },
): AsyncGenerator<Buffer> {
  const iterator = source[Symbol.asyncIterator]()
  let head: Buffer = Buffer.alloc(0)
  let done = false
  while (head.length < 3 && !done) {
    const next = await iterator.next()
    if (next.done) done = true
    else head = head.length === 0 ? next.value : Buffer.concat([head, next.value])
  }
  const detected = detectBom(head)
  report.encoding = detected?.encoding ?? textEncoding(options)
  report.bom = detected !== undefined
  let first = head.subarray(detected?.length ?? 0)
  // After a BOM there may be nothing at all: look ahead until some content or the end shows up.
  while (first.length === 0 && !done) {
    const next = await iterator.next()
    if (next.done) done = true
    else first = next.value
  }
  if (first.length === 0 && done) {
    throw new DataError('EMPTY_BODY', {
      tableId: options.tableId,
      reason: `the service sent an empty file (${head.length === 0 ? '0 bytes' : `${head.length} bytes, only a byte-order mark`}); even an empty table has a header line`,
      hint: 'check that the saved table has columns; the previous data is kept',
    })
  }
  if (!report.bom && UTF16_HIGH_BYTE[report.encoding] !== undefined) {
    // Enough of the body to tell UTF-16 from text in another encoding, which UTF-16 decodes without complaint.
    while (first.length < UTF16_CHECK_BYTES && !done) {
      const next = await iterator.next()
      if (next.done) done = true
      else first = Buffer.concat([first, next.value])
    }
    checkUtf16(first, report.encoding, options)
  }
  const rest = async function* () {
    if (first.length > 0) yield first
    if (done) return
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
  }
  const startOffset = detected?.length ?? 0
  if (isUtf8Label(report.encoding)) yield* validateUtf8(rest(), options, startOffset)
  else yield* transcode(rest(), report.encoding, options, startOffset)
}

/** Where UTF-16 puts the high byte of each code unit: the zero of every ASCII character, line breaks included. */
const UTF16_HIGH_BYTE: Readonly<Record<string, 0 | 1>> = { 'utf-16le': 1, 'utf-16be': 0 }
const UTF16_CHECK_BYTES = 4096

/**
 * A body read as UTF-16 without a byte-order mark (declared, or the table's `encoding`) must look like it: a
 * table's header line has delimiters or a line break, whose high byte is zero. None in its first 4 KB means the
 * bytes are in another encoding (or the other byte order), which UTF-16 would decode into one header of garbage.
 */
const checkUtf16 = (head: Buffer, encoding: string, options: DecodeOptions): void => {
  const high = UTF16_HIGH_BYTE[encoding]!
  const window = head.subarray(0, UTF16_CHECK_BYTES)
  let expected = 0
  let other = 0
  for (let i = 0; i + 1 < window.length; i += 2) {
    if (window[i + high] === 0) expected++
    if (window[i + 1 - high] === 0) other++
  }
  if (expected > 0 || window.length < 2) return
  const from = options.encoding !== undefined ? 'the table\'s "encoding"' : 'the charset its Content-Type declares'
  const looks = other > 0 ? `it looks like UTF-16${high === 1 ? 'BE' : 'LE'}` : 'it is not UTF-16'
  throw new DataError('INVALID_ENCODING', {
    tableId: options.tableId,
    reason: `the body is read as ${encoding} (${from}), but its first ${window.length} bytes have none of the zero bytes ${encoding} text has (in every line break and delimiter): ${looks}`,
    hint: ENCODING_HINT,
  })
}

const detectBom = (head: Buffer): { encoding: string; length: number } | undefined => {
  if (head[0] === UTF8_BOM[0] && head[1] === UTF8_BOM[1] && head[2] === UTF8_BOM[2])
    return { encoding: 'utf-8', length: 3 }
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 }
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 }
  return undefined
}

/** Bytes a sequence has when it starts with `lead`; 0 for a byte that cannot start one (validation reports it). */
const sequenceLength = (lead: number): number =>
  lead < 0x80
    ? 1
    : lead >= 0xc2 && lead <= 0xdf
      ? 2
      : lead >= 0xe0 && lead <= 0xef
        ? 3
        : lead >= 0xf0 && lead <= 0xf4
          ? 4
          : 0

/** Length of an incomplete UTF-8 sequence at the end of `chunk` (0 to 3 bytes), to carry into the next chunk. */
const incompleteTail = (chunk: Buffer): number => {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!
    if ((byte & 0xc0) !== 0x80) return sequenceLength(byte) > back ? back : 0
  }
  return 0
}

/** Whether `bytes` could still become valid UTF-8 if more bytes followed. */
const isIncompleteUtf8 = (bytes: Buffer): boolean => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true })
    return true
  } catch {
    return false
  }
}

/**
 * Byte offset where the first ill-formed UTF-8 sequence in `bytes` starts (Unicode table 3-7), or -1.
 * A sequence cut off by the end of `bytes` counts as ill-formed. It runs once, on failure, so it can be simple.
 */
export const firstInvalidUtf8Offset = (bytes: Uint8Array): number => {
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i]!
    if (lead < 0x80) {
      i++
      continue
    }
    let length: number
    let low = 0x80
    let high = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) length = 2
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3
      if (lead === 0xe0) low = 0xa0 // overlong
      if (lead === 0xed) high = 0x9f // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4
      if (lead === 0xf0) low = 0x90 // overlong
      if (lead === 0xf4) high = 0x8f // above U+10FFFF
    } else return i
    for (let k = 1; k < length; k++) {
      const byte = bytes[i + k]
      if (byte === undefined || byte < (k === 1 ? low : 0x80) || byte > (k === 1 ? high : 0xbf)) return i
    }
    i += length
  }
  return -1
}

/**
 * Never "replace the bytes": a body that is not text at all (compressed, a workbook) would then be published as
 * rows of U+FFFD. What helps is the encoding the file really has.
 */
const ENCODING_HINT =
  'the previous data is kept; find out which encoding the service writes (its Content-Type charset, or the export settings of the saved table) and set the table\'s "encoding" to it (a WHATWG label such as "windows-1252")'

const hexByte = (byte: number): string => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`

async function* validateUtf8(source: AsyncIterable<Buffer>, options: DecodeOptions, startOffset: number) {
  let carry: Buffer | undefined
  let offset = startOffset
  for await (const raw of source) {
    const chunk = carry ? Buffer.concat([carry, raw]) : raw
    const tail = incompleteTail(chunk)
    const whole = tail > 0 ? chunk.subarray(0, chunk.length - tail) : chunk
    carry = tail > 0 ? Buffer.from(chunk.subarray(chunk.length - tail)) : undefined
    yield checkUtf8(whole, offset, options)
    offset += whole.length
  }
  if (carry) yield checkUtf8(carry, offset, options, true)
}

const checkUtf8 = (bytes: Buffer, offset: number, options: DecodeOptions, atEnd = false): Buffer => {
  if (isUtf8(bytes)) return bytes
  if (options.invalidBytes === 'replace') return Buffer.from(bytes.toString('utf8'), 'utf8')
  const index = Math.max(0, firstInvalidUtf8Offset(bytes))
  throw new DataError('INVALID_ENCODING', {
    tableId: options.tableId,
    reason: `${atEnd && isIncompleteUtf8(bytes) ? 'the file ends in an incomplete' : 'invalid'} UTF-8 byte sequence at byte offset ${offset + index} (${hexByte(bytes[index] ?? 0)})`,
    hint: ENCODING_HINT,
  })
}

async function* transcode(
  source: AsyncIterable<Buffer>,
  encoding: string,
  options: DecodeOptions,
  startOffset: number,
) {
  const decoder = new TextDecoder(encoding, { fatal: options.invalidBytes === 'fail', ignoreBOM: true })
  let offset = startOffset
  const decode = (bytes: Buffer | undefined): string => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode()
    } catch (cause) {
      throw new DataError('INVALID_ENCODING', {
        tableId: options.tableId,
        reason: bytes
          ? `bytes that are invalid in ${encoding} between byte offsets ${offset} and ${offset + bytes.length}`
          : `the file ends in an incomplete ${encoding} character (${offset} bytes)`,
        hint: ENCODING_HINT,
        cause,
      })
    }
  }
  for await (const chunk of source) {
    const text = decode(chunk)
    offset += chunk.length
    if (text.length > 0) yield Buffer.from(text, 'utf8')
  }
  const last = decode(undefined)
  if (last.length > 0) yield Buffer.from(last, 'utf8')
}
