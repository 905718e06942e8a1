/**
 * Cutting a CSV body into chunks for a parallel parse. A chunk ends after a line break that is only guessed to end
 * a record (it may be inside a quoted field); the parse verifies the guess (see parallel-parse.ts). The guess
 * prefers a line break after a line that reads as a whole record on its own: quotes balanced and the header's
 * number of fields. A line of a quoted field's text rarely has that shape, so a wrong guess is rare.
 */

const QUOTE = 0x22
const CR = 0x0d
const LF = 0x0a
/** Lines looked at, back from the chunk's end, for one that reads as a whole record. */
const MAX_GUESSES = 8

interface ChunkShape {
  /** Bytes a chunk is cut at (after the line break before). */
  readonly chunkBytes: number
  /** A line this long with no break in it ends the chunking: the rest of the body is parsed as it streams. */
  readonly maxLineBytes: number
  readonly delimiter: string
  readonly headerFields: number
}

/** The chunks already read (`head`), then the rest of the body from `rest` unless the body ended within them. */
export async function* replay(
  head: readonly Buffer[],
  rest: AsyncIterator<Buffer> | undefined,
): AsyncGenerator<Buffer> {
  yield* head
  if (rest) for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value
}

/** A chunk, the last one of the body or not; or the rest of the body, left to one parser. */
export type ChunkPiece = { readonly bytes: Buffer; readonly last: boolean } | { readonly rest: AsyncIterable<Buffer> }

/** Index just after the last line break before `end` (a CR only when the byte after it is known and not an LF), or 0. */
const breakBefore = (bytes: Uint8Array, end: number): number => {
  if (end <= 0) return 0
  const lf = bytes.lastIndexOf(LF, end - 1)
  const cr = end >= 2 ? bytes.lastIndexOf(CR, end - 2) : -1
  return Math.max(lf, cr) + 1
}

/** Whether bytes `from` to `to` read as one record on their own: quotes balanced and `fields` fields. */
const looksLikeRecord = (bytes: Uint8Array, from: number, to: number, delimiter: number, fields: number): boolean => {
  let quoted = false
  let count = 1
  for (let i = from; i < to; i++) {
    const byte = bytes[i]
    if (byte === QUOTE) quoted = !quoted
    else if (byte === delimiter && !quoted) count++
  }
  return !quoted && count === fields
}

/** Where to cut `bytes`: just after a line break guessed to end a record; 0 when there is no line break. */
export const guessRecordEnd = (bytes: Uint8Array, delimiter: string, fields: number): number => {
  const separator = delimiter.charCodeAt(0)
  const last = breakBefore(bytes, bytes.length)
  let cut = last
  for (let guess = 0; cut > 0 && guess < MAX_GUESSES; guess++) {
    let lineEnd = cut - 1
    if (bytes[lineEnd] === LF && lineEnd > 0 && bytes[lineEnd - 1] === CR) lineEnd--
    const lineStart = breakBefore(bytes, lineEnd)
    if (looksLikeRecord(bytes, lineStart, lineEnd, separator, fields)) return cut
    cut = lineStart
  }
  return last
}

/** Index just after the header line's line break (CRLF whole), by the dialect scan's quoting; -1 when not known. */
export const headerLineEnd = (bytes: Buffer): number => {
  let quoted = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (byte === 0x22) quoted = !quoted
    else if (!quoted && (byte === 0x0a || byte === 0x0d)) {
      if (byte === 0x0a) return i + 1
      return i + 1 < bytes.length ? (bytes[i + 1] === 0x0a ? i + 2 : i + 1) : -1
    }
  }
  return -1
}

/** The parts, copied into one buffer of its own (never the shared pool's: it is handed to another thread whole). */
export const gather = (parts: readonly Buffer[], size = parts.reduce((sum, part) => sum + part.length, 0)): Buffer => {
  const bytes = Buffer.allocUnsafeSlow(size)
  let at = 0
  for (const part of parts) {
    bytes.set(part, at)
    at += part.length
  }
  return bytes
}

/** Cuts `head` then the rest of `source` into chunks of about `chunkBytes`, read only as the chunks are taken. */
export async function* cutChunks(
  head: Buffer,
  source: AsyncIterator<Buffer>,
  shape: ChunkShape,
): AsyncGenerator<ChunkPiece> {
  let parts = head.length > 0 ? [head] : []
  let size = head.length
  let wanted = shape.chunkBytes
  let done = false
  /** Whether the rest of `source` went to another reader, which then owns it. */
  let handedOver = false
  try {
    while (true) {
      while (size < wanted && !done) {
        const next = await source.next()
        if (next.done) done = true
        else {
          parts.push(next.value)
          size += next.value.length
        }
      }
      if (done) {
        if (size > 0) yield { bytes: gather(parts, size), last: true }
        return
      }
      const bytes = gather(parts, size)
      const cut = guessRecordEnd(bytes, shape.delimiter, shape.headerFields)
      if (cut === 0) {
        if (size >= shape.maxLineBytes) {
          handedOver = true
          yield { rest: replay([bytes], source) }
          return
        }
        // No line break yet: read on, doubling, so that a long line is copied a few times, not once per read.
        parts = [bytes]
        wanted = 2 * size
        continue
      }
      // A copy: the chunk's whole buffer goes to a worker.
      const carry = Buffer.from(bytes.subarray(cut))
      yield { bytes: bytes.subarray(0, cut), last: false }
      parts = carry.length > 0 ? [carry] : []
      size = carry.length
      wanted = shape.chunkBytes
    }
  } finally {
    // Stopped early (or done): ending the body's iteration frees the download.
    if (!handedOver && !done) await source.return?.(undefined)
  }
}
