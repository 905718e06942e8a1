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
import { type CliResult, runExportInProcess, tempDir } from '../support/cli.ts'

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

const workspace = async (table: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<Workspace> => {
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
      expect(day2.stderr).toMatch(/HELD \[COLUMN_IDENTITY_AMBIGUOUS\] .*the column email\S* had the header "(Email|EMAIL)"/)
      expect(await rows(ws, 'SELECT dt, email, email_2 FROM devices ORDER BY dt')).toEqual([
        [DATE, hmac(PRIVATE), MAILBOX],
      ])
      expect(await leaks(ws, [day1, day2], [PRIVATE, KEY, TOKEN])).toEqual([])
    },
  )
})
