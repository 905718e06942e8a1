import http from 'node:http'
import net from 'node:net'
import { inspect } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, DEMO_TOKENS, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { parseExportConfig } from '../../functions/export/core/config.ts'
import {
  AuthenticationError,
  ErrorCode,
  ExportError,
  NetworkError,
  PermissionError,
  ProtocolError,
  ServerError,
  TableNotFoundError,
  TlsError,
} from '../../functions/export/core/errors.ts'
import { InventoryClient } from '../../functions/export/source/client.ts'
import type { RetryNotice } from '../../functions/export/source/retry.ts'

let emulator: RunningEmulator

beforeAll(async () => {
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())
beforeEach(() => {
  emulator.faults.clear()
  emulator.requests.length = 0
})

const tuning = parseExportConfig({
  source: { baseUrl: 'http://127.0.0.1' },
  tables: [{ id: '1' }],
  export: {
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterSeconds: 2 },
    timeouts: { idleSeconds: 1 },
  },
}).export

const clientFor = (token = DEMO_TOKEN, baseUrl = emulator.baseUrl) => new InventoryClient({ baseUrl, token, tuning })

/** One request for a table's CSV, as the service source makes it on each of the run's attempts. */
const downloadOf = (client: InventoryClient, tableId: string) => client.requestTable(tableId, 'csv', {})

const drain = async (body: AsyncIterable<Buffer>): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/** The error a promise rejects with, for assertions on its fields. */
const failureOf = async (promise: Promise<unknown>): Promise<ExportError> => {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ExportError)
    return error as ExportError
  }
  throw new Error('expected a failure')
}

describe('the inventory client', () => {
  it('sends the token header and reads whose token it is', async () => {
    const user = await clientFor().getCurrentUser()
    expect(user.username).toBe('api-export')
    expect(emulator.requests.map((r) => [r.path, r.token])).toEqual([['/rest/usermanager/me', DEMO_TOKEN]])
  })

  it('streams a table as CSV with its status and headers', async () => {
    const download = await downloadOf(clientFor(), '1003')
    const text = await drain(download.body)
    expect(download.status).toBe(200)
    expect(download.contentType).toMatch(/^text\/csv/)
    expect(text.split('\r\n')[0]).toContain('Display Name')
    expect(download.progress.bytes).toBe(Buffer.byteLength(text))
  })

  it.each([
    ['an unknown token', 'no-such-token', AuthenticationError, ErrorCode.AUTH_REJECTED, 401],
    ['a revoked token', DEMO_TOKENS.revoked, AuthenticationError, ErrorCode.AUTH_REJECTED, 401],
    ['an expired token', DEMO_TOKENS.expired, AuthenticationError, ErrorCode.AUTH_REJECTED, 401],
  ])('rejects %s with a coded 401 error and no retry', async (_, token, type, code, status) => {
    const error = await failureOf(downloadOf(clientFor(token), '1001'))
    expect(error).toBeInstanceOf(type)
    expect(error).toMatchObject({ code, status, tableId: '1001', failureClass: 'auth', retryable: false })
    expect(error.message).toContain('table 1001')
    expect(error.message).not.toContain(token)
    expect(emulator.requests).toHaveLength(1)
  })

  it('reports a table the user may not read as a permission error', async () => {
    const error = await failureOf(downloadOf(clientFor(DEMO_TOKENS.limited), '1005'))
    expect(error).toBeInstanceOf(PermissionError)
    expect(error).toMatchObject({ code: ErrorCode.PERMISSION_DENIED, status: 403, tableId: '1005' })
    expect(error.hint).toMatch(/share the saved table/)
  })

  it.each([
    ['an unknown table id', '999999'],
    ['a table whose export feature is disabled', '1004'],
  ])('reports %s as not found', async (_, tableId) => {
    const error = await failureOf(downloadOf(clientFor(), tableId))
    expect(error).toBeInstanceOf(TableNotFoundError)
    expect(error).toMatchObject({ code: ErrorCode.TABLE_NOT_FOUND, status: 404, tableId })
  })

  it('retries a token check answered 500 and succeeds when the server heals', async () => {
    emulator.faults.script('me', [{ kind: 'status', status: 500 }])
    const notices: RetryNotice[] = []
    const user = await clientFor().getCurrentUser(undefined, (n) => notices.push(n))
    expect(user.username).toBe('api-export')
    expect(emulator.requests).toHaveLength(2)
    expect(notices.map((n) => [n.attempt, n.error.code, n.error.status])).toEqual([[1, ErrorCode.SERVER_ERROR, 500]])
  })

  it('gives up on a token check answered 503 that never heals after the configured attempts', async () => {
    emulator.faults.always('me', { kind: 'status', status: 503 })
    const error = await failureOf(clientFor().getCurrentUser())
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ code: ErrorCode.SERVER_ERROR, status: 503, retryable: true })
    expect(error.message).toContain('after 3 attempts')
    expect(emulator.requests).toHaveLength(3)
  })

  it('waits as long as Retry-After says on a 429 to the token check', async () => {
    emulator.faults.script('me', [{ kind: 'status', status: 429, retryAfter: '1' }])
    const notices: RetryNotice[] = []
    await clientFor().getCurrentUser(undefined, (n) => notices.push(n))
    expect(notices.map((n) => n.delayMs)).toEqual([1000])
  })

  it('fails at once when Retry-After exceeds the configured cap', async () => {
    emulator.faults.script('me', [{ kind: 'status', status: 503, retryAfter: '3600' }])
    const error = await failureOf(clientFor().getCurrentUser())
    expect(error).toMatchObject({ code: ErrorCode.SERVER_ERROR, status: 503 })
    expect(emulator.requests).toHaveLength(1)
  })

  it('refuses an HTML page served with status 200', async () => {
    emulator.faults.script('1003', [{ kind: 'html200' }])
    const download = downloadOf(clientFor(), '1003')
    const error = await failureOf(download.then((d) => drain(d.body)))
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error).toMatchObject({ code: ErrorCode.NOT_CSV, status: 200 })
  })

  it('reports a body cut off before its Content-Length as truncated', async () => {
    emulator.faults.script('1003', [{ kind: 'truncate', afterBytes: 500, advertiseLength: true }])
    const download = await downloadOf(clientFor(), '1003')
    const error = await failureOf(drain(download.body))
    expect(error).toMatchObject({ code: ErrorCode.BODY_TRUNCATED, retryable: true })
    expect(error.message).toMatch(/cut off after 500 bytes/)
  })

  it('reports a stalled body as a timeout', async () => {
    emulator.faults.script('1003', [{ kind: 'stall', afterBytes: 200, ms: 3000 }])
    const download = await downloadOf(clientFor(), '1003')
    const error = await failureOf(drain(download.body))
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).toMatchObject({ code: ErrorCode.TIMEOUT })
    expect(error.message).toMatch(/stalled after 200 bytes/)
  })

  it('reports a refused connection as a network error after retries', async () => {
    const port = await freePort()
    const error = await failureOf(clientFor(DEMO_TOKEN, `http://127.0.0.1:${port}`).getCurrentUser())
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).toMatchObject({ code: ErrorCode.NETWORK_ERROR, failureClass: 'network' })
    expect(error.message).toContain('ECONNREFUSED')
  })

  it('keeps the path of a base URL and names the URL it requested in the error', async () => {
    // A reverse proxy that serves the service under /inventory and nothing outside it.
    const seen: string[] = []
    const proxy = http.createServer((request, response) => {
      seen.push(request.url ?? '')
      if (!request.url?.startsWith('/inventory/')) return void response.writeHead(404).end()
      fetch(`${emulator.baseUrl}${request.url.slice('/inventory'.length)}`, {
        headers: { token: String(request.headers.token) },
      }).then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
        response.end(Buffer.from(await answer.arrayBuffer()))
      })
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/inventory`
    try {
      const client = clientFor(DEMO_TOKEN, base)
      expect((await client.getCurrentUser()).username).toBe('api-export')
      const error = await failureOf(downloadOf(client, '999999'))
      expect(seen).toEqual(['/inventory/rest/usermanager/me', '/inventory/rest/tables/999999/csv'])
      expect(error.message).toContain(`GET ${base}/rest/tables/999999/csv answered HTTP 404`)
    } finally {
      proxy.close()
    }
  })

  it('says so when https reaches a port that answers plain HTTP, instead of suggesting a private CA', async () => {
    const error = await failureOf(clientFor(DEMO_TOKEN, emulator.baseUrl.replace('http:', 'https:')).getCurrentUser())
    expect(error).toBeInstanceOf(TlsError)
    expect(error.message).toContain('failed TLS (the port answered plain HTTP)')
    expect(error.hint).toMatch(/the port speaks plain HTTP, not https/)
    expect(error.hint).not.toMatch(/caCertificatesFile/)
  })

  it('keeps the token out of its printed form', () => {
    const client = clientFor('super-secret-canary-token')
    expect(inspect(client, { showHidden: true, depth: 5 })).not.toContain('super-secret-canary-token')
    expect(JSON.stringify(client)).not.toContain('super-secret-canary-token')
  })
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
