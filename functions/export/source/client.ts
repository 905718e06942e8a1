/**
 * Client of the inventory service's REST API: who owns the token, and streaming table downloads.
 * The token lives in a private field and is only ever written into the `token` request header.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { ExportTuning } from '../core/config.ts'
import {
  ApiNotFoundError,
  AuthenticationError,
  DeadlineError,
  type ExportError,
  HttpClientError,
  NetworkError,
  PermissionError,
  ProtocolError,
  ServerError,
  TableNotFoundError,
  TlsError,
} from '../core/errors.ts'
import { type BodyProgress, checkCsvContentType, checkedCsvBody } from './body.ts'
import { ACCEPT_ENCODING, contentCoding, declaredCharset, decodedBody, type WireCount } from './content-coding.ts'
import { type HttpResponse, httpGet, TransportError, toTransportError } from './http.ts'
import { parseRetryAfter, type RetryClock, type RetryNotice, systemClock, withRetries } from './retry.ts'
import { type TokenEcho, tokenEcho } from './token-echo.ts'

const TableFormat = { CSV: 'csv', XLSX: 'xlsx' } as const
type TableFormat = (typeof TableFormat)[keyof typeof TableFormat]

interface InventoryClientOptions {
  readonly baseUrl: string
  readonly token: string
  readonly tuning: Pick<ExportTuning, 'retry' | 'timeouts'>
  /** PEM text of extra CA certificates. */
  readonly extraCaCertificates?: string | undefined
  readonly userAgent?: string
  readonly clock?: RetryClock
}

/** The token owner's record as the service returns it; its fields are not documented, so it stays open. */
type InventoryUser = Readonly<Record<string, unknown>>

interface TableDownload {
  readonly tableId: string
  readonly status: number
  readonly contentType: string | undefined
  /** The `charset` parameter of the Content-Type, lowercased, when it has one. */
  readonly charset: string | undefined
  /** Content-Length: bytes on the wire, compressed when the answer is. */
  readonly contentLength: number | undefined
  /** Attempts it took to get the response headers. */
  readonly attempts: number
  /** The body's bytes, decompressed; a cut-off or non-CSV body makes iteration throw a coded error. */
  readonly body: AsyncIterable<Buffer>
  /** Bytes of `body` handed on so far (decompressed; updated while `body` is read). */
  readonly progress: BodyProgress
  /** Stops the download (frees the socket) when the caller gives up early. */
  readonly cancel: () => void
}

export class InventoryClient {
  readonly #token: string
  /** Hides the token in what the service answers, and finds it in a body: see token-echo.ts. */
  readonly #echo: TokenEcho
  readonly #options: InventoryClientOptions
  readonly #baseUrl: URL

  constructor(options: InventoryClientOptions) {
    this.#token = options.token
    this.#echo = tokenEcho(options.token)
    this.#options = options
    this.#baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`)
  }

  /** `GET /rest/usermanager/me`: proves the token works and tells whose it is. */
  async getCurrentUser(signal?: AbortSignal, onRetry?: (notice: RetryNotice) => void): Promise<InventoryUser> {
    const path = 'rest/usermanager/me'
    const what = `the token check (GET ${this.#url(path).href})`
    // The body is read inside the retried operation: a reset or stall while reading it is retried as well.
    const readUser = (checkSignal: AbortSignal) => async (attempt: number) => {
      const response = await this.#getOk(path, what, undefined, checkSignal, attempt)
      const text = this.#echo.redact((await readSmallBody(response, what)).toString('utf8'))
      try {
        const parsed: unknown = JSON.parse(text)
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as InventoryUser
      } catch {
        // fall through: not JSON
      }
      throw new ProtocolError('UNEXPECTED_RESPONSE', {
        status: response.status,
        reason: `${what} answered HTTP ${response.status} with something other than a JSON user record`,
      })
    }
    const seconds = this.#options.tuning.timeouts.tokenCheckSeconds
    const overrun = new DeadlineError({
      reason: `stopped: ${what} took longer than export.timeouts.tokenCheckSeconds (${seconds} s); no table was exported`,
      hint: 'check the service or the proxy in front of it (an answer that trickles); raise export.timeouts.tokenCheckSeconds if it is only slow',
    })
    return withinBudget(seconds, overrun, signal, (checkSignal) =>
      withRetries(readUser(checkSignal), this.#options.tuning.retry, {
        clock: this.#clock,
        signal: checkSignal,
        onRetry,
      }),
    )
  }

  /** One `GET /rest/tables/{tableId}/{format}`, not retried: resolves once the headers of a 200 answer arrive. */
  async requestTable(
    tableId: string,
    format: TableFormat,
    { signal, attempt = 1 }: { readonly signal?: AbortSignal | undefined; readonly attempt?: number },
  ): Promise<TableDownload> {
    const path = `rest/tables/${encodeURIComponent(tableId)}/${format}`
    // The whole URL, so a base URL with a path (or a wrong one) shows in every message about this request.
    const what = `GET ${this.#url(path).href}`
    const response = await this.#getOk(path, what, tableId, signal, attempt)
    const contentLength = parseContentLength(response.headers)
    const progress: BodyProgress = { bytes: 0 }
    const coding = contentCoding(response.headers['content-encoding'])
    try {
      checkFraming(response, contentLength, { tableId, what })
      if (format === TableFormat.CSV) checkCsvContentType(response.headers, tableId, response.status)
      if ('unsupported' in coding)
        throw unsupportedCoding(coding.unsupported, { tableId, what, status: response.status })
    } catch (error) {
      // Refused before anyone reads it: the socket is freed now, not when the idle timer fires.
      response.body.destroy()
      throw error
    }
    const wire: WireCount = { bytes: 0 }
    const decoded = decodedBody(response.body, coding.coding, wire)
    const contentType = response.headers['content-type']
    const body = checkedCsvBody(
      decoded.body,
      {
        tableId,
        status: response.status,
        contentLength,
        contentType,
        coding: coding.coding,
        wire,
        // A workbook's reader tells a page from a zip itself; the framing checks apply to both.
        sniffPage: format === TableFormat.CSV,
        holdsToken: this.#echo.scanner(),
      },
      progress,
    )
    return {
      tableId,
      status: response.status,
      contentType,
      charset: declaredCharset(contentType),
      contentLength,
      attempts: attempt,
      body,
      progress,
      cancel: decoded.destroy,
    }
  }

  get #clock(): RetryClock {
    return this.#options.clock ?? systemClock
  }

  /** One GET of `path`; anything but 200 is a coded error (retryable when it may heal: 5xx, 408, 429). */
  async #getOk(
    path: string,
    what: string,
    tableId: string | undefined,
    signal: AbortSignal | undefined,
    attempt: number,
  ): Promise<HttpResponse> {
    const response = await this.#get(path, what, tableId, signal)
    if (response.status !== 200) {
      response.body.resume()
      throw statusError(response, { tableId, what, attempt, now: this.#clock.now() })
    }
    return response
  }

  /** Relative to the base URL, whose path is kept: `https://host/inventory` + `rest/...` -> `/inventory/rest/...`. */
  #url(path: string): URL {
    return new URL(path, this.#baseUrl)
  }

  async #get(path: string, what: string, tableId: string | undefined, signal: AbortSignal | undefined) {
    const { timeouts } = this.#options.tuning
    let response: HttpResponse
    try {
      response = await httpGet({
        url: this.#url(path),
        headers: {
          token: this.#token,
          accept: path.endsWith('/csv')
            ? 'text/csv'
            : path.endsWith('/xlsx')
              ? 'application/octet-stream'
              : 'application/json',
          'user-agent': this.#options.userAgent ?? 'inventory-athena-export',
          // A table compresses well; the token check's few hundred bytes are left as they are.
          ...(path.startsWith('rest/tables/') ? { 'accept-encoding': ACCEPT_ENCODING } : {}),
        },
        connectTimeoutMs: timeouts.connectSeconds * 1000,
        idleTimeoutMs: timeouts.idleSeconds * 1000,
        extraCaCertificates: this.#options.extraCaCertificates,
        signal,
      })
    } catch (error) {
      throw transportToExportError(error, what, tableId)
    }
    // Every header value is upstream text that messages may quote (Content-Type, Content-Encoding, its charset).
    return { ...response, headers: redactHeaders(response.headers, this.#echo) }
  }

  /** Keeps the token out of `console.log(client)` and `util.inspect`. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `InventoryClient { baseUrl: '${this.#baseUrl.href}' }`
  }
}

const redactHeaders = (headers: IncomingHttpHeaders, echo: TokenEcho): IncomingHttpHeaders =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map(echo.redact) : value === undefined ? value : echo.redact(value),
    ]),
  )

/**
 * Runs `work` within a wall-clock budget: the idle timer is reset by every byte, so an answer that trickles would
 * otherwise hold the run forever. An aborted request surfaces as a network error; past the budget the failure is
 * `overrun`. The caller's own signal (the run's deadline) is the caller's to name.
 */
const withinBudget = async <T>(
  seconds: number,
  overrun: ExportError,
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> => {
  const budget = new AbortController()
  const timer = setTimeout(() => budget.abort(overrun), seconds * 1000)
  try {
    return await work(signal ? AbortSignal.any([signal, budget.signal]) : budget.signal)
  } catch (error) {
    if (budget.signal.aborted && !signal?.aborted) throw overrun
    throw error
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Only a framed body is trusted: with neither Content-Length nor chunked encoding, the body ends when the socket
 * closes, and a connection cut mid-body would pass for a complete (shorter) table.
 */
const checkFraming = (
  response: HttpResponse,
  contentLength: number | undefined,
  context: { tableId: string; what: string },
): void => {
  if (contentLength !== undefined || /\bchunked\b/i.test(response.headers['transfer-encoding'] ?? '')) return
  throw new ProtocolError('BODY_UNFRAMED', {
    tableId: context.tableId,
    status: response.status,
    reason: `${context.what} answered HTTP ${response.status} with neither Content-Length nor chunked encoding, so the end of the body could not be checked`,
  })
}

/** A Content-Encoding that was not asked for: its bytes are never read, whatever the table's `encoding`. */
const unsupportedCoding = (coding: string, context: { tableId: string; what: string; status: number }): ProtocolError =>
  new ProtocolError('UNEXPECTED_RESPONSE', {
    tableId: context.tableId,
    status: context.status,
    reason: `${context.what} answered HTTP ${context.status} with Content-Encoding ${JSON.stringify(coding.slice(0, 60))}, which the exporter does not decode (it asks for ${ACCEPT_ENCODING})`,
  })

const parseContentLength = (headers: IncomingHttpHeaders): number | undefined => {
  const value = headers['content-length']
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined
}

/** A 408 asks the client to send the request again; like 429 and 5xx it may heal, so it is retried. */
const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500

const statusError = (
  response: HttpResponse,
  context: { tableId: string | undefined; what: string; attempt: number; now: number },
): ExportError => {
  const { status } = response
  const details = { tableId: context.tableId, status, what: context.what }
  if (status === 401) return new AuthenticationError(details)
  if (status === 403) return new PermissionError(details)
  // 410 Gone: the saved table was deleted; to the operator that is the same as an unknown id.
  if ((status === 404 || status === 410) && context.tableId === undefined) {
    return new ApiNotFoundError({ status, what: context.what })
  }
  if (status === 404 || status === 410) return new TableNotFoundError(details)
  if (isTransientStatus(status)) {
    return new ServerError({
      ...details,
      attempts: context.attempt,
      retryAfterMs: parseRetryAfter(response.headers['retry-after'], context.now),
    })
  }
  if (status >= 300 && status < 400) {
    return new ProtocolError('UNEXPECTED_RESPONSE', {
      tableId: context.tableId,
      status,
      reason: `${context.what} was redirected (HTTP ${status}), probably to a login page; redirects are not followed`,
    })
  }
  if (status >= 200 && status < 300) {
    // 202 (being prepared), 204 (no content), 206 (a part): none of them is the whole file.
    return new ProtocolError('UNEXPECTED_RESPONSE', {
      tableId: context.tableId,
      status,
      reason: `${context.what} answered HTTP ${status} instead of 200 with the whole file`,
    })
  }
  return new HttpClientError(details)
}

/** A user record is a few hundred bytes; far more means something else answered, and it is not read. */
const MAX_SMALL_BODY_BYTES = 1024 * 1024

/** Reads a small JSON answer whole; a cut-off or stalled body becomes a coded (retryable) error. */
const readSmallBody = async (response: HttpResponse, what: string): Promise<Buffer> => {
  const chunks: Buffer[] = []
  let size = 0
  const tooLarge = () => {
    response.body.destroy()
    return new ProtocolError('BODY_TOO_LARGE', {
      status: response.status,
      reason: `${what} answered more than ${MAX_SMALL_BODY_BYTES} bytes; a user record is a few hundred`,
    })
  }
  if (Number(response.headers['content-length']) > MAX_SMALL_BODY_BYTES) throw tooLarge()
  try {
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length
      if (size > MAX_SMALL_BODY_BYTES) throw tooLarge()
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof ProtocolError) throw error
    const transport = toTransportError(error)
    if (transport.kind === 'aborted') {
      throw new ProtocolError('BODY_TRUNCATED', {
        status: response.status,
        reason: `${what} was cut off after ${Buffer.concat(chunks).length} bytes`,
      })
    }
    throw new NetworkError({ what, reason: transport.message, timeout: transport.kind === 'idle-timeout' })
  }
  return Buffer.concat(chunks)
}

const transportToExportError = (error: unknown, what: string, tableId: string | undefined): ExportError => {
  if (!(error instanceof TransportError)) {
    return new NetworkError({
      tableId,
      what,
      reason: error instanceof Error ? error.message : String(error),
      cause: error,
    })
  }
  if (error.kind === 'tls') {
    // OpenSSL's "wrong version number": the first bytes back were not a TLS record, typically "HTTP/1.1 400".
    const plainHttp = error.errorCode === 'EPROTO' && /wrong version number|packet length too long/i.test(error.message)
    return new TlsError({ tableId, what, reason: error.message, plainHttp })
  }
  const timeout = error.kind === 'connect-timeout' || error.kind === 'idle-timeout'
  return new NetworkError({ tableId, what, reason: error.message, timeout })
}
