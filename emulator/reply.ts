/** Sending responses: every answer goes through `reply`, which applies the request's body fault. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createBodyWriter, pause, type Wait } from './body-writer.ts'
import { type BodyFault, type Fault, isBodyFault } from './faults.ts'

/** One request as the `requests` log keeps it. */
export interface RecordedRequest {
  readonly method: string
  /** The request target as sent: path plus query string. */
  readonly path: string
  /** The `token` header, undefined when absent. */
  readonly token: string | undefined
  /** Status of the response head; 0 until it is written, and for ever when the socket was reset before it. */
  status: number
  /** When the request arrived. */
  readonly at: Date
}

/** A request being answered. */
export interface Exchange {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly record: RecordedRequest
  /** The fault chosen for this request, if any. */
  readonly fault: Fault | undefined
  /** How delay, stall and trickle faults wait. @default a timer */
  readonly wait?: Wait | undefined
}

export interface ReplyBody {
  /** Byte length when known up front; the reply then carries a Content-Length, else it is chunked. */
  readonly length?: number
  /** Called once per send (twice when a truncate fault has to advertise a length nobody knows yet). */
  readonly chunks: () => Iterable<Uint8Array> | AsyncIterable<Uint8Array>
}

const countBytes = async (body: ReplyBody): Promise<number> => {
  let total = 0
  for await (const chunk of body.chunks()) total += chunk.byteLength
  return total
}

const contentLengthOf = async (body: ReplyBody, fault: BodyFault | undefined): Promise<number | undefined> => {
  if (fault?.kind !== 'truncate') return body.length
  if (!fault.advertiseLength) return undefined
  return body.length ?? countBytes(body)
}

/** Writes the head and streams the body with backpressure, acting out a truncate/stall/reset fault. */
export const reply = async (
  exchange: Exchange,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ReplyBody,
): Promise<void> => {
  const { res, record } = exchange
  const fault = exchange.fault !== undefined && isBodyFault(exchange.fault) ? exchange.fault : undefined
  if (exchange.fault?.kind === 'unframed') return replyUnframed(exchange, status, headers, body, exchange.fault)
  if (exchange.fault?.kind === 'trickle') body = trickled(body, exchange.fault, res, exchange.wait)
  const length = await contentLengthOf(body, fault)
  if (res.destroyed) return
  record.status = status
  res.writeHead(status, length === undefined ? headers : { ...headers, 'Content-Length': String(length) })
  const writer = createBodyWriter(res, fault, exchange.wait)
  for await (const chunk of body.chunks()) {
    if (!(await writer.write(chunk))) return
  }
  await writer.end()
}

/** The body's first `afterBytes` bytes, then the rest one byte at a time, `everyMs` apart. */
const trickled = (
  body: ReplyBody,
  fault: Extract<Fault, { kind: 'trickle' }>,
  res: Exchange['res'],
  wait: Wait | undefined,
): ReplyBody => ({
  ...(body.length === undefined ? {} : { length: body.length }),
  chunks: async function* () {
    let sent = 0
    for await (const chunk of body.chunks()) {
      const head = chunk.subarray(0, Math.max(0, fault.afterBytes - sent))
      sent += chunk.byteLength
      yield head
      for (let at = head.byteLength; at < chunk.byteLength && !res.destroyed; at++) {
        await pause(res, fault.everyMs, wait)
        yield chunk.subarray(at, at + 1)
      }
    }
  },
})

/** The body delimited by the connection's close alone, ended cleanly after `afterBytes` when given. */
const replyUnframed = async (
  exchange: Exchange,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ReplyBody,
  fault: Extract<Fault, { kind: 'unframed' }>,
): Promise<void> => {
  const { res, record } = exchange
  if (res.destroyed) return
  record.status = status
  // Without a length and without chunking, Node marks the response `Connection: close` and ends it by closing.
  res.useChunkedEncodingByDefault = false
  res.shouldKeepAlive = false
  res.writeHead(status, headers)
  let left = fault.afterBytes ?? Number.POSITIVE_INFINITY
  for await (const chunk of body.chunks()) {
    const part = chunk.subarray(0, Math.min(chunk.byteLength, left))
    left -= part.byteLength
    if (!res.write(part))
      await new Promise((resolve) => {
        res.once('drain', resolve)
        res.once('close', resolve)
      })
    if (left === 0 || res.destroyed) break
  }
  res.end()
}

/** A body held in memory, sent in slices so byte-offset faults can land anywhere in it. */
export const bytesBody = (bytes: Uint8Array, sliceBytes = 64 * 1024): ReplyBody => ({
  length: bytes.byteLength,
  chunks: function* () {
    for (let offset = 0; offset < bytes.byteLength; offset += sliceBytes) {
      yield bytes.subarray(offset, offset + sliceBytes)
    }
  },
})

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

export const replyJson = (
  exchange: Exchange,
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> =>
  reply(
    exchange,
    status,
    { 'Content-Type': JSON_CONTENT_TYPE, ...headers },
    bytesBody(Buffer.from(JSON.stringify(value))),
  )

/** Error bodies are small JSON objects: `{ "error": "..." }`. */
export const replyError = (
  exchange: Exchange,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> => replyJson(exchange, status, { error: message }, headers)
