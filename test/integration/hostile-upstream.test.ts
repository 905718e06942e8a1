/**
 * A hostile or misconfigured upstream (a plain node:http server on loopback) and a careless operator, against the
 * real CLI: cases in the families of issue 42 it does not list. Nothing wrong or private is published with exit 0,
 * nothing hangs past the budgets, nothing crashes, and no token or private value reaches any output or file.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { scanForNeedles } from '../support/canary.ts'
import { type CliResult, runCommandInProcess, runExportInProcess, tempDir } from '../support/cli.ts'

const DATE = '2026-03-14'
const NEXT = '2026-03-15'
const TOKEN = `hostile-${randomBytes(12).toString('hex')}`
const KEY = randomBytes(32).toString('hex')
const hmac = (value: string): string => createHmac('sha256', KEY).update(value, 'utf8').digest('hex').slice(0, 32)

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void | Promise<void>

const me: Handler = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end('{"username":"api-export","email":"api@example.com"}')
}
const csv =
  (body: string | Buffer, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', ...headers })
    response.end(body)
  }

let routes: Record<string, Handler> = {}
let server: http.Server
let baseUrl: string
let folders: string[] = []

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const handler = routes[request.url ?? ''] ?? (request.url === '/rest/usermanager/me' ? me : undefined)
    if (handler === undefined) response.writeHead(404).end()
    else await handler(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  return new Promise<void>((resolve) => server.close(() => resolve()))
})
afterEach(async () => {
  routes = {}
  server.closeAllConnections()
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })))
  folders = []
})

interface Workspace {
  readonly out: string
  readonly run: (date?: string, extra?: readonly string[]) => Promise<CliResult>
}

const workspace = async (
  table: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
): Promise<Workspace> => {
  const out = await tempDir('hostile-out-')
  const etc = await tempDir('hostile-etc-')
  folders.push(out, etc)
  const file = path.join(etc, 'config.json')
  await writeFile(
    file,
    JSON.stringify({
      source: { baseUrl },
      tables: [{ id: '3001', name: 'devices', ...table }],
      export: { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 5 }, ...config },
    }),
  )
  await writeFile(path.join(etc, 'token'), TOKEN)
  await writeFile(path.join(etc, 'key'), KEY)
  return {
    out,
    run: (date = DATE, extra = []) =>
      runExportInProcess([
        ...['--config', file, '--token-file', path.join(etc, 'token'), '--out', out, '--date', date],
        ...['--pseudonymization-key-file', path.join(etc, 'key'), ...extra],
      ]),
  }
}

const outcomeOf = async (ws: Workspace, date = DATE): Promise<TableOutcome> => {
  const folder = path.join(ws.out, '_runs', `dt=${date}`)
  const records = await Promise.all(
    (await readdir(folder))
      .filter((f) => f.endsWith('.json'))
      .map(async (f) => JSON.parse(await readFile(path.join(folder, f), 'utf8')) as RunRecord),
  )
  records.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt))
  return records.at(-1)!.tables[0]!
}

const rows = async (ws: Workspace, sql: string) => (await queryWarehouse(ws.out, sql)).rows.map((r) => [...r])

const LOGIN = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please sign in</body></html>\n'

/** Whether a needle (the token, the key, a private value) is anywhere in the output or the written files. */
const leaks = (ws: Workspace, results: readonly CliResult[], needles: readonly string[]) =>
  scanForNeedles(
    { folders: [ws.out], texts: Object.fromEntries(results.map((r, i) => [`run ${i}`, r.stdout + r.stderr])) },
    needles,
  )

const GOOD = 'Device ID,Owner\r\n1,Ada\r\n2,Grace\r\n'
const GOOD_ROWS = [
  ['1', 'Ada'],
  ['2', 'Grace'],
]
const latestRows = (ws: Workspace) => rows(ws, 'SELECT device_id, owner FROM devices_latest ORDER BY device_id')

/** A good export of DATE, then `handler` for NEXT: the table fails with `code`, and the good data stays. */
const expectRefusedAfterGood = async (handler: Handler, code: string, table: Record<string, unknown> = {}) => {
  const ws = await workspace(table)
  routes = { '/rest/tables/3001/csv': csv(GOOD) }
  const good = await ws.run()
  expect(good.exitCode, good.stderr).toBe(0)
  routes = { '/rest/tables/3001/csv': handler }
  const bad = await ws.run(NEXT)
  const outcome = await outcomeOf(ws, NEXT)
  expect(bad.exitCode, bad.stderr).toBe(1)
  expect(outcome.error?.code, bad.stderr).toBe(code)
  expect(await latestRows(ws)).toEqual(GOOD_ROWS)
  expect(await leaks(ws, [good, bad], [TOKEN, KEY])).toEqual([])
  return { ws, bad, outcome }
}

describe('a page after what a table may start with', () => {
  it.each([
    ['a sep= line', `sep=;\r\n${LOGIN}`],
    ['5 KB of blank lines', `${'\r\n'.repeat(2600)}${LOGIN}`],
    ['a second byte-order mark', `\ufeff\ufeff${LOGIN}`],
    ['a no-break space', `\u00a0${LOGIN}`],
    ['a zero-width space', `\u200b${LOGIN}`],
  ])('is refused after %s (NOT_CSV), and the previous data stays', async (_what, body) => {
    const { outcome } = await expectRefusedAfterGood(csv(body), 'NOT_CSV')
    expect(outcome.error?.message).toContain('markup (an HTML or XML page)')
  })

  it('is refused after more than a megabyte of blank lines', async () => {
    const { outcome } = await expectRefusedAfterGood(csv(`${'\n'.repeat(1024 * 1024 + 1)}${GOOD}`), 'NOT_CSV')
    expect(outcome.error?.message).toContain('nothing but blank lines in its first 1 MiB')
  })

  it('a table after 8 KB of blank lines sent a byte at a time still lands', async () => {
    const ws = await workspace()
    routes = {
      '/rest/tables/3001/csv': async (_q, response) => {
        response.writeHead(200, { 'content-type': 'text/csv' })
        for (const byte of '\n'.repeat(8192)) response.write(byte)
        response.end(GOOD)
      },
    }
    const result = await ws.run()
    expect(result.exitCode, result.stderr).toBe(0)
    expect(await latestRows(ws)).toEqual(GOOD_ROWS)
  })
})

describe('the token echoed by the service', () => {
  const split =
    (body: Buffer, at: number): Handler =>
    async (_q, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' })
      response.write(body.subarray(0, at))
      await new Promise((resolve) => setTimeout(resolve, 15))
      response.end(body.subarray(at))
    }
  const inCell = `Device ID,Owner\r\n1,${TOKEN}\r\n`

  it.each([
    ['a text/plain error page', csv(`Invalid token ${TOKEN}\n`, { 'content-type': 'text/plain' })],
    ['a JSON error within its first 40 characters', csv(`{"error":"bad token ${TOKEN}"}`)],
    ['a cell', csv(inCell)],
    ['a cell split across two chunks', split(Buffer.from(inCell), inCell.indexOf(TOKEN) + 5)],
    ['a UTF-16 body', csv(Buffer.from(inCell, 'utf16le'), { 'content-type': 'text/csv; charset=utf-16le' })],
    ['a gzip body', csv(gzipSync(inCell), { 'content-encoding': 'gzip' })],
  ])('in %s: the table fails NOT_CSV and the token is nowhere', async (_where, handler) => {
    const { outcome } = await expectRefusedAfterGood(handler, 'NOT_CSV', { archiveRaw: true })
    expect(outcome.error?.message).toContain('a body that holds the token this request sent')
  })

  it.each([
    ['its charset', csv(GOOD, { 'content-type': `text/csv; charset=${TOKEN}` }), 'INVALID_ENCODING'],
    ['its Content-Encoding', csv(GOOD, { 'content-encoding': TOKEN }), 'UNEXPECTED_RESPONSE'],
  ])('in %s: the failure quotes [token] instead', async (_where, handler, code) => {
    const { outcome } = await expectRefusedAfterGood(handler, code)
    expect(outcome.error?.message).toContain('"[token]"')
  })

  it('in the user record: the run goes on, and the token is nowhere', async () => {
    const ws = await workspace()
    routes = {
      '/rest/usermanager/me': (_q, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ username: 'api-export', email: TOKEN }))
      },
      '/rest/tables/3001/csv': csv(GOOD),
    }
    const result = await ws.run()
    expect(result.exitCode, result.stderr).toBe(0)
    const etc = folders.at(-1)!
    const check = await runCommandInProcess('check', [
      ...['--config', path.join(etc, 'config.json'), '--token-file', path.join(etc, 'token')],
    ])
    expect(check.exitCode, check.stderr).toBe(0)
    expect(check.stdout).toContain('it belongs to api-export ([token])')
    expect(await leaks(ws, [result, check], [TOKEN])).toEqual([])
  })
})

describe('a body that is not in the UTF-16 it is read as', () => {
  const le = (text: string) => Buffer.from(text, 'utf16le')
  it.each([
    [
      'UTF-16BE declared as utf-16le',
      csv(le(GOOD).swap16(), { 'content-type': 'text/csv; charset=utf-16le' }),
      {},
      'it looks like UTF-16BE',
    ],
    [
      'UTF-8 declared as utf-16',
      csv(`${GOOD}3,Ida\r\n`, { 'content-type': 'text/csv; charset=utf-16' }),
      {},
      'it is not UTF-16',
    ],
  ])('%s fails INVALID_ENCODING, and the previous data stays', async (_what, handler, table, looks) => {
    const { outcome } = await expectRefusedAfterGood(handler, 'INVALID_ENCODING', table)
    expect(outcome.error?.message).toContain(looks)
  })

  it("fails a first export too when the table's encoding is utf-16le and the bytes are UTF-8: nothing lands", async () => {
    const ws = await workspace({ encoding: 'utf-16le' })
    routes = { '/rest/tables/3001/csv': csv(`${GOOD}3,Ida\r\n`) }
    const result = await ws.run()
    expect(result.exitCode).toBe(1)
    expect((await outcomeOf(ws)).error).toMatchObject({ code: 'INVALID_ENCODING' })
    expect(result.stderr).toContain(`the body is read as utf-16le (the table's "encoding")`)
    await expect(readdir(path.join(ws.out, 'devices'))).rejects.toThrow()
  })

  it('UTF-16LE of a header in Chinese still lands', async () => {
    const ws = await workspace()
    routes = {
      '/rest/tables/3001/csv': csv(le('设备,所有者\r\n1,张伟\r\n'), { 'content-type': 'text/csv; charset=utf-16le' }),
    }
    const result = await ws.run()
    expect(result.exitCode, result.stderr).toBe(0)
  })
})

describe('a careless operator', () => {
  it('giving the key file as the token file is refused before any request: the key is never sent', async () => {
    const ws = await workspace({ columns: { pseudonymize: ['owner'] } })
    const requests: string[] = []
    routes = {
      '/rest/usermanager/me': (request, response) => {
        requests.push(String(request.headers.token))
        me(request, response)
      },
      '/rest/tables/3001/csv': csv(GOOD),
    }
    const etc = folders.at(-1)!
    const result = await runExportInProcess([
      ...['--config', path.join(etc, 'config.json'), '--out', ws.out, '--date', DATE],
      ...['--token-file', path.join(etc, 'key'), '--pseudonymization-key-file', path.join(etc, 'key')],
    ])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('holds the pseudonymization key, not the API token')
    expect(requests).toEqual([])
    expect(await leaks(ws, [result], [KEY])).toEqual([])
  })
})

describe('textually identical headers', () => {
  const PRIVATE = 'zelda.quixotewright@private.example'

  it.each([
    ['one renamed and a new one added', { pseudonymize: ['owner'] }, 'ID,Holder,Owner,Owner', `${PRIVATE},desk,new`],
    ['one moved past a new column', { pseudonymize: ['owner'] }, 'ID,Owner,X,Owner', `desk,x,${PRIVATE}`],
    [
      'the dropped one renamed and a new one added',
      { drop: ['owner'] },
      'ID,Holder,Owner,Owner',
      `${PRIVATE},desk,new`,
    ],
  ])('are held when as many come back while another column came (%s)', async (_case, columns, header, values) => {
    const ws = await workspace({ columns })
    routes = { '/rest/tables/3001/csv': csv(`ID,Owner,Owner\r\n1,${PRIVATE},desk\r\n`) }
    const day1 = await ws.run()
    expect(day1.exitCode, day1.stderr).toBe(0)
    routes = { '/rest/tables/3001/csv': csv(`${header}\r\n1,${values}\r\n`) }
    const day2 = await ws.run(NEXT)
    expect(day2.exitCode).toBe(1)
    expect(day2.stderr).toMatch(
      /HELD \[COLUMN_IDENTITY_AMBIGUOUS\] .*2 columns have the header "Owner" \(owner, owner_2\) and are told apart only by their order, while columns were added or removed/,
    )
    expect(await rows(ws, 'SELECT dt FROM devices')).toEqual([[DATE]])
    expect(await leaks(ws, [day1, day2], [PRIVATE, KEY, TOKEN])).toEqual([])
  })
})

describe('headers that normalize to one name', () => {
  const PRIVATE = 'zelda.quixotewright@private.example'
  const MAILBOX = 'it-desk@corp.example'

  it.each([
    ['swapped, every header with a trailing space', 'Device ID,EMAIL ,Email ', [MAILBOX, PRIVATE]],
    ['the private one gone, the other with a new spelling', 'Device ID,Email ', [MAILBOX]],
  ] as const)(
    'are held when their text changes (%s): the pseudonymized value is never in clear',
    async (_case, header, values) => {
      const ws = await workspace({ columns: { pseudonymize: ['email'] } })
      routes = { '/rest/tables/3001/csv': csv(`Device ID,Email,EMAIL\r\nD-1,${PRIVATE},${MAILBOX}\r\n`) }
      const day1 = await ws.run()
      expect(day1.exitCode, day1.stderr).toBe(0)
      routes = { '/rest/tables/3001/csv': csv(`${header}\r\nD-1,${values.join(',')}\r\n`) }
      const day2 = await ws.run(NEXT)
      expect(day2.exitCode).toBe(1)
      expect(day2.stderr).toMatch(
        /HELD \[COLUMN_IDENTITY_AMBIGUOUS\] .*the column email\S* had the header "(Email|EMAIL)"/,
      )
      expect(await rows(ws, 'SELECT dt, email, email_2 FROM devices ORDER BY dt')).toEqual([
        [DATE, hmac(PRIVATE), MAILBOX],
      ])
      expect(await leaks(ws, [day1, day2], [PRIVATE, KEY, TOKEN])).toEqual([])
    },
  )
})
