/**
 * One GET over node:http(s) with a connect timeout, an idle timeout (headers and body alike) and an optional
 * extra CA bundle. Resolves once the response headers arrive; the body is left to stream.
 * Errors here are raw transport errors: the client turns them into coded errors with the table id.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import https from 'node:https'
import tls from 'node:tls'

interface HttpGetOptions {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly connectTimeoutMs: number
  readonly idleTimeoutMs: number
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  readonly extraCaCertificates?: string | undefined
  readonly signal?: AbortSignal | undefined
}

export interface HttpResponse {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: IncomingMessage
}

/** A transport failure: which phase it happened in decides whether the body was partly received. */
export class TransportError extends Error {
  readonly kind: 'connect-timeout' | 'idle-timeout' | 'tls' | 'network' | 'aborted'
  readonly errorCode: string | undefined
  constructor(kind: TransportError['kind'], message: string, errorCode?: string) {
    super(message)
    this.name = 'TransportError'
    this.kind = kind
    this.errorCode = errorCode
  }
}

const TLS_ERROR_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'EPROTO',
])

/** Maps a socket error to a TransportError whose message holds no request data (so never the token). */
export const toTransportError = (error: unknown): TransportError => {
  if (error instanceof TransportError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code !== undefined && TLS_ERROR_CODES.has(code)) {
    return new TransportError('tls', `${code}: ${(error as Error).message}`, code)
  }
  if (code === 'ECONNRESET' && (error as Error).message === 'aborted') {
    return new TransportError('aborted', 'the connection closed before the body was complete', code)
  }
  const reason = code ?? (error instanceof Error ? error.name : 'error')
  const detail = error instanceof Error && error.message && !error.message.includes(reason) ? ` ${error.message}` : ''
  return new TransportError('network', `${reason}${detail}`, code)
}

const caBundles = new Map<string, string[]>()
const trustedCas = (extra: string): string[] => {
  let bundle = caBundles.get(extra)
  if (!bundle) {
    bundle = [...tls.rootCertificates, extra]
    caBundles.set(extra, bundle)
  }
  return bundle
}

export const httpGet = (options: HttpGetOptions): Promise<HttpResponse> =>
  new Promise((resolve, reject) => {
    const { url } = options
    const isHttps = url.protocol === 'https:'
    const transport = isHttps ? https : http
    let settled = false
    const fail = (error: TransportError) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      request.destroy()
      reject(error)
    }
    const request = transport.request(url, {
      method: 'GET',
      headers: options.headers,
      signal: options.signal,
      ...(isHttps && options.extraCaCertificates ? { ca: trustedCas(options.extraCaCertificates) } : {}),
    })
    const connectTimer = setTimeout(
      () => fail(new TransportError('connect-timeout', `no connection within ${options.connectTimeoutMs} ms`)),
      options.connectTimeoutMs,
    )
    request.on('socket', (socket) => {
      const connected = () => clearTimeout(connectTimer)
      if (!socket.connecting) connected()
      else socket.once(isHttps ? 'secureConnect' : 'connect', connected)
    })
    let response: IncomingMessage | undefined
    request.setTimeout(options.idleTimeoutMs, () => {
      const error = new TransportError('idle-timeout', `no data for ${options.idleTimeoutMs} ms`)
      // After the headers, the stall is reported through the body stream the caller is reading.
      if (response) response.destroy(error)
      else fail(error)
    })
    request.on('error', (error) => fail(toTransportError(error)))
    request.on('response', (incoming) => {
      if (settled) {
        incoming.destroy()
        return
      }
      settled = true
      response = incoming
      clearTimeout(connectTimer)
      resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: incoming })
    })
    request.end()
  })
