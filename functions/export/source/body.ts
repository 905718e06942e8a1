/**
 * Guards a CSV response body: refuses pages served instead of the file, counts bytes, and turns an early end
 * of the stream into a coded error, so a cut-off download can never pass for a complete (shorter) table.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { NetworkError, ProtocolError } from '../core/errors.ts'
import { toTransportError } from './http.ts'

const NON_CSV_CONTENT_TYPES = /^(text\/html|application\/xhtml\+xml|application\/(problem\+)?json)\b/i
const HTML_START = /^\s*(<!doctype html|<html|<head|<body|<\?xml)/i
/** A JSON object or an array of objects: an error document, whatever its Content-Type says. */
const JSON_START = /^\s*(\{\s*"|\[\s*\{)/
const BOM = /^\uFEFF|^ï»¿/
/** How much of the body to look at when sniffing for an HTML page or a JSON document. */
const SNIFF_BYTES = 512

export interface BodyProgress {
  /** Bytes received so far. */
  bytes: number
}

/** Rejects an answer that declares itself as something other than a CSV file. */
export const checkCsvContentType = (headers: IncomingHttpHeaders, tableId: string, status: number): void => {
  const contentType = headers['content-type'] ?? ''
  if (NON_CSV_CONTENT_TYPES.test(contentType)) {
    throw new ProtocolError('NOT_CSV', {
      tableId,
      status,
      reason: `the service answered HTTP ${status} with ${contentType.split(';')[0]} instead of a CSV file`,
    })
  }
}

/**
 * Yields the body's chunks unchanged while checking them. `progress.bytes` is updated before each chunk is
 * yielded, so callers can report it even when the stream later fails.
 */
export async function* checkedCsvBody(
  body: AsyncIterable<Buffer>,
  context: {
    tableId: string
    status: number
    contentLength: number | undefined
    /** Whether to refuse an HTML or JSON page; a workbook's reader tells those from a zip itself. @default true */
    sniffPage?: boolean
  },
  progress: BodyProgress = { bytes: 0 },
): AsyncGenerator<Buffer> {
  const { tableId, status, contentLength } = context
  let sniffed = context.sniffPage === false
  let head = ''
  try {
    for await (const chunk of body) {
      if (!sniffed) {
        head += chunk.toString('latin1', 0, Math.min(chunk.length, SNIFF_BYTES))
        if (head.length >= SNIFF_BYTES || head.includes('\n')) {
          sniffed = true
          refusePage(head, { tableId, status })
        }
      }
      progress.bytes += chunk.length
      yield chunk
    }
  } catch (error) {
    if (error instanceof ProtocolError) throw error
    const transport = toTransportError(error)
    if (transport.kind === 'idle-timeout') {
      throw new NetworkError({
        tableId,
        what: 'the download',
        reason: `stalled after ${progress.bytes} bytes (${transport.message})`,
        timeout: true,
      })
    }
    if (transport.kind === 'aborted') {
      throw new ProtocolError('BODY_TRUNCATED', {
        tableId,
        status,
        reason: `the download was cut off after ${progress.bytes} bytes${contentLength === undefined ? '' : ` of ${contentLength}`}`,
      })
    }
    throw new NetworkError({
      tableId,
      what: 'the download',
      reason: `${transport.message} after ${progress.bytes} bytes`,
    })
  }
  if (!sniffed) refusePage(head, { tableId, status })
  if (contentLength !== undefined && progress.bytes !== contentLength) {
    throw new ProtocolError('BODY_TRUNCATED', {
      tableId,
      status,
      reason: `the download ended after ${progress.bytes} of ${contentLength} bytes`,
    })
  }
}

/** Throws NOT_CSV when the start of the body is an HTML page or a JSON document rather than CSV. */
const refusePage = (head: string, context: { tableId: string; status: number }): void => {
  const text = head.replace(BOM, '')
  const kind = HTML_START.test(text) ? 'an HTML page' : JSON_START.test(text) ? 'a JSON document' : undefined
  if (kind === undefined) return
  throw new ProtocolError('NOT_CSV', {
    ...context,
    reason: `the service answered HTTP ${context.status} with ${kind} instead of a CSV file`,
  })
}
