/**
 * Guards a table's response body: refuses pages served instead of the file (by Content-Type, and by the body's
 * first non-blank bytes), counts bytes, and turns an early end of the stream (or of its compressed stream) into a
 * coded error, so a cut-off download can never pass for a complete (shorter) table.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { NetworkError, ProtocolError } from '../core/errors.ts'
import { isDecompressionError, type WireCount } from './content-coding.ts'
import { toTransportError } from './http.ts'
import { bodyExcerpt, SNIFF_LIMIT_BYTES, sniffPage } from './sniff.ts'

/**
 * Types that are never a CSV: HTML, XML and JSON, also as a `+xml` or `+json` suffix (`application/problem+json`,
 * `application/atom+xml`). `text/plain` and the like pass, and the body's first bytes decide.
 */
const NON_CSV_CONTENT_TYPES =
  /^(text\/html|application\/xhtml\+xml|application\/xml|text\/xml|application\/json|text\/json|[\w.-]+\/[\w.-]+\+(json|xml))$/i

export interface BodyProgress {
  /** Bytes of the (decompressed) body handed on so far: what is hashed, archived and parsed. */
  bytes: number
}

/** The media type of a Content-Type, for messages: without parameters, quoted, at most 60 characters. */
const mediaType = (contentType: string | undefined): string =>
  JSON.stringify((contentType ?? '').split(';')[0]!.trim().slice(0, 60) || 'none')

/** Rejects an answer that declares itself as something other than a CSV file. */
export const checkCsvContentType = (headers: IncomingHttpHeaders, tableId: string, status: number): void => {
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim()
  if (NON_CSV_CONTENT_TYPES.test(type)) {
    throw new ProtocolError('NOT_CSV', {
      tableId,
      status,
      reason: `the service answered HTTP ${status} with Content-Type ${mediaType(type)} instead of a CSV file`,
    })
  }
}

interface BodyContext {
  readonly tableId: string
  readonly status: number
  /** Content-Length: bytes on the wire, compressed when the answer is. */
  readonly contentLength: number | undefined
  readonly contentType: string | undefined
  /** The Content-Encoding decoded (`identity` for none), named when the compressed stream fails. */
  readonly coding: string
  /** Bytes read off the wire so far. */
  readonly wire: WireCount
  /** Whether to refuse a page by its first bytes; a workbook's reader tells those from a zip itself. @default true */
  readonly sniffPage?: boolean
  /** Whether a chunk holds the token the request sent (one scanner per body): such a body is never read. */
  readonly holdsToken: (chunk: Buffer) => boolean
}

/**
 * Yields the body's chunks while checking them; the first few KB are held back until their start shows a table
 * rather than a page. `progress.bytes` is updated before each chunk is yielded, so callers can report it even
 * when the stream later fails.
 */
export async function* checkedCsvBody(
  body: AsyncIterable<Buffer>,
  context: BodyContext,
  progress: BodyProgress = { bytes: 0 },
): AsyncGenerator<Buffer> {
  let held: Buffer[] | undefined = context.sniffPage === false ? undefined : []
  let heldBytes = 0
  let lookAt = 0
  const release = function* (chunks: readonly Buffer[]) {
    for (const chunk of chunks) {
      progress.bytes += chunk.length
      yield chunk
    }
  }
  try {
    for await (const chunk of body) {
      if (context.holdsToken(chunk)) throw tokenEchoed(context)
      if (held === undefined) {
        yield* release([chunk])
        continue
      }
      held.push(chunk)
      heldBytes += chunk.length
      // Looked at again only once the held bytes have doubled: a start trickled byte by byte costs O(n), not O(n²).
      if (heldBytes < lookAt) continue
      if (!decided(held, false, context)) {
        lookAt = Math.min(heldBytes * 2, SNIFF_LIMIT_BYTES)
        continue
      }
      const chunks = held
      held = undefined
      yield* release(chunks)
    }
  } catch (error) {
    throw bodyFailure(error, context)
  }
  if (held !== undefined) {
    decided(held, true, context)
    yield* release(held)
  }
  const { contentLength, wire } = context
  if (contentLength !== undefined && wire.bytes !== contentLength) {
    throw new ProtocolError('BODY_TRUNCATED', {
      tableId: context.tableId,
      status: context.status,
      reason: `the download ended after ${wire.bytes} of ${contentLength} bytes`,
    })
  }
}

/** Whether the held start of the body shows a table; throws NOT_CSV when it shows a page. */
const decided = (held: readonly Buffer[], ended: boolean, context: BodyContext): boolean => {
  const head = Buffer.concat(
    held,
    Math.min(
      SNIFF_LIMIT_BYTES,
      held.reduce((n, chunk) => n + chunk.length, 0),
    ),
  )
  const kind = sniffPage(head, ended)
  if (kind === 'undecided') return false
  if (kind === undefined) return true
  // A page's first characters help find who answered; compressed bytes quoted would only be noise.
  const text = kind === 'a JSON document' || kind.startsWith('markup')
  throw new ProtocolError('NOT_CSV', {
    tableId: context.tableId,
    status: context.status,
    reason: `the service answered HTTP ${context.status} (Content-Type ${mediaType(context.contentType)}) with ${kind} instead of a CSV file${text ? `; it starts ${bodyExcerpt(head)}` : ''}`,
  })
}

/** A body that holds the token is an echo of the request (an error or debug page), never the table. */
const tokenEchoed = (context: BodyContext): ProtocolError =>
  new ProtocolError('NOT_CSV', {
    tableId: context.tableId,
    status: context.status,
    reason: `the service answered HTTP ${context.status} (Content-Type ${mediaType(context.contentType)}) with a body that holds the token this request sent (an error or debug page echoing the request) instead of a CSV file; none of it is kept`,
  })

/** A failure while reading the body, as a coded error that says how far the download got. */
const bodyFailure = (error: unknown, context: BodyContext): unknown => {
  if (error instanceof ProtocolError) return error
  const { tableId, status, contentLength, wire } = context
  const got = `${wire.bytes} bytes${contentLength === undefined ? '' : ` of ${contentLength}`}`
  if (isDecompressionError(error)) {
    const message = error instanceof Error ? error.message : String(error)
    // zlib's "unexpected end of file": the bytes ran out inside the compressed stream.
    if ((error as { code?: unknown }).code === 'Z_BUF_ERROR') {
      return new ProtocolError('BODY_TRUNCATED', {
        tableId,
        status,
        reason: `the ${context.coding} body ended inside its compressed stream after ${got} (${message})`,
      })
    }
    return new ProtocolError('UNEXPECTED_RESPONSE', {
      tableId,
      status,
      reason: `the ${context.coding} body cannot be decompressed after ${got} (${message})`,
    })
  }
  const transport = toTransportError(error)
  if (transport.kind === 'idle-timeout') {
    return new NetworkError({
      tableId,
      what: 'the download',
      reason: `stalled after ${wire.bytes} bytes (${transport.message})`,
      timeout: true,
    })
  }
  if (transport.kind === 'aborted') {
    return new ProtocolError('BODY_TRUNCATED', {
      tableId,
      status,
      reason: `the download was cut off after ${got}`,
    })
  }
  return new NetworkError({ tableId, what: 'the download', reason: `${transport.message} after ${wire.bytes} bytes` })
}
