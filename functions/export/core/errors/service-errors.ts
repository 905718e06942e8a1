/** The inventory service's failures: HTTP statuses, the network, TLS, and responses that are not the file asked for. */
import { FailureClass } from '../constants.ts'
import { ErrorCode } from './codes.ts'
import { ExportError, tableSubject } from './export-error.ts'

/** 401: the token is missing, unknown, expired or revoked. */
export class AuthenticationError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.AUTH_REJECTED,
      FailureClass.AUTH,
      `${tableSubject(details.tableId)}${details.what} was rejected with HTTP ${details.status}: the token is missing, invalid, expired or revoked`,
      {
        ...details,
        hint: 'create a new API token (Settings > API Tokens), store it in the secret, then run `npm run check`',
      },
    )
  }
}

/** 403: the token works but its owner may not read this. */
export class PermissionError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.PERMISSION_DENIED,
      FailureClass.AUTH,
      `${tableSubject(details.tableId)}${details.what} was refused with HTTP ${details.status}: the token's user lacks permission`,
      { ...details, hint: "share the saved table with the token's user, or grant the user the export permission" },
    )
  }
}

/** 404: unknown table id, or the export feature is disabled. */
export class TableNotFoundError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.TABLE_NOT_FOUND,
      FailureClass.NOT_FOUND,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}: the table id does not exist or the export feature is disabled`,
      {
        ...details,
        hint: 'check the table id (last segment of the saved table permalink) and that API export is enabled',
      },
    )
  }
}

/**
 * The token check's own path is not there: not an unknown table (no table is named yet) but a base URL that points
 * somewhere other than the service's API (a wrong host or path, a proxy's page), or an API of another shape.
 */
export class ApiNotFoundError extends ExportError {
  constructor(details: { status: number; what: string }) {
    super(
      ErrorCode.API_NOT_FOUND,
      FailureClass.NOT_FOUND,
      `${details.what} answered HTTP ${details.status}: there is no inventory service API at this base URL`,
      {
        ...details,
        hint: "check --base-url or source.baseUrl (or the baseUrl in the token secret): it is the address the service's web interface is opened at, without /rest/...; if it is right, check that the service's REST API is enabled",
      },
    )
  }
}

/** Any other 4xx. */
export class HttpClientError extends ExportError {
  constructor(details: { tableId?: string | undefined; status: number; what: string }) {
    super(
      ErrorCode.HTTP_CLIENT_ERROR,
      FailureClass.PROTOCOL,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}`,
      { ...details, hint: 'the request was refused; check the base URL and the service version' },
    )
  }
}

/** 5xx or 429 that persisted after retries (or would be retried). */
export class ServerError extends ExportError {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined
  constructor(details: {
    tableId?: string | undefined
    status: number
    what: string
    attempts?: number
    retryAfterMs?: number | undefined
  }) {
    const rateLimited = details.status === 429
    const tries =
      details.attempts === undefined ? '' : ` (after ${details.attempts} attempt${details.attempts === 1 ? '' : 's'})`
    const wait = details.retryAfterMs
      ? `; it asked to be retried after ${Math.ceil(details.retryAfterMs / 1000)} s (Retry-After)`
      : ''
    super(
      rateLimited ? ErrorCode.RATE_LIMITED : ErrorCode.SERVER_ERROR,
      FailureClass.SERVER,
      `${tableSubject(details.tableId)}${details.what} answered HTTP ${details.status}${tries}: ${rateLimited ? 'rate limited' : 'server or load problem'}${wait}`,
      {
        ...details,
        retryable: true,
        hint: 'the service is failing or overloaded; the next scheduled run retries, or reduce export.concurrency (a Retry-After longer than export.retry.maxRetryAfterSeconds is not waited for)',
      },
    )
    this.retryAfterMs = details.retryAfterMs
  }
}

/** Connection refused, reset, DNS failure or a timeout. */
export class NetworkError extends ExportError {
  constructor(details: {
    tableId?: string | undefined
    what: string
    reason: string
    timeout?: boolean
    cause?: unknown
  }) {
    super(
      details.timeout ? ErrorCode.TIMEOUT : ErrorCode.NETWORK_ERROR,
      FailureClass.NETWORK,
      `${tableSubject(details.tableId)}${details.what} failed: ${details.reason}`,
      {
        ...details,
        retryable: true,
        hint: 'check that the service is reachable from where the exporter runs (VPC, security group, DNS)',
      },
    )
  }
}

/** The TLS handshake failed: an untrusted or mismatched certificate. */
export class TlsError extends ExportError {
  constructor(details: {
    tableId?: string | undefined
    what: string
    reason: string
    /** The port answered plain HTTP to the TLS handshake. */
    plainHttp?: boolean
    cause?: unknown
  }) {
    super(
      ErrorCode.TLS_ERROR,
      FailureClass.NETWORK,
      `${tableSubject(details.tableId)}${details.what} failed TLS${details.plainHttp ? ' (the port answered plain HTTP)' : ''}: ${details.reason}`,
      {
        ...details,
        hint: details.plainHttp
          ? 'the port speaks plain HTTP, not https: use the https port of the service in source.baseUrl, or http:// (with source.allowInsecureHttp for a non-loopback host)'
          : 'for a private CA, set source.caCertificatesFile to a PEM bundle of the chain',
      },
    )
  }
}

const PROTOCOL_HINTS = {
  BODY_TRUNCATED: 'the download ended early; the previous data is kept and the next run retries',
  NOT_CSV:
    'the service answered with a page instead of the file; check the base URL and any proxy or login in front of it',
  UNEXPECTED_RESPONSE:
    'the service answered something other than what was asked for (a redirect, a partial or empty answer, a record that is not JSON); check the base URL and any proxy or login in front of it',
  BODY_UNFRAMED:
    'a cut-off body could not be told from a complete one, so none of it was used and the previous data is kept; make the service or the proxy in front of it send Content-Length or chunked encoding',
  BODY_TOO_LARGE:
    'the answer is far larger than such an answer can be; check the base URL and any proxy in front of it',
} as const

/** The response is not the file we asked for: cut short, unframed, oversized, or HTML/JSON where CSV was expected. */
export class ProtocolError extends ExportError {
  constructor(
    code: keyof typeof PROTOCOL_HINTS,
    details: { tableId?: string | undefined; status?: number; reason: string },
  ) {
    super(ErrorCode[code], FailureClass.PROTOCOL, `${tableSubject(details.tableId)}${details.reason}`, {
      ...details,
      retryable: code === 'BODY_TRUNCATED',
      hint: PROTOCOL_HINTS[code],
    })
  }
}
