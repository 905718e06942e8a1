/**
 * Budgets cover every request, and no failure leaves a promise without an owner: the token check against a
 * service that trickles its headers, a 404 on the token check, and a deadline that fires while an archived table's
 * two uploads are in flight (Lambda on s3rver with slow part uploads, and the CLI on a local folder).
 */
import { randomBytes } from 'node:crypto'
import { readdir, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ErrorCode } from '../../functions/export/core/errors.ts'
import { createHandler, type RunFailedError } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'
import { captureOutput, lambdaContext, valuesOf } from '../support/emf.ts'
import { lambdaEnvironment, SERVICE_NAME, tokenSecretStandIn } from '../support/lambda.ts'
import { type KoaMiddleware, type RunningS3, startS3 } from '../support/s3rver.ts'

const TOKEN = 'budget-test-token-5b2e'
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A server on 127.0.0.1 whose sockets are all destroyed when the test ends, stalled or not. */
const listen = async (server: net.Server): Promise<string> => {
  const sockets = new Set<net.Socket>()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
}

const folder = async (prefix: string): Promise<string> => {
  const dir = await tempDir(prefix)
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A CLI export of table 1001 as `devices` against `baseUrl`, with `exportTuning` in its configuration. */
const cliExport = async (baseUrl: string, exportTuning: Record<string, unknown>, table: object = {}) => {
  const dir = await folder('request-budgets-')
  const config = path.join(dir, 'config.json')
  const tables = [{ id: '1001', name: 'devices', ...table }]
  await writeFile(config, JSON.stringify({ source: { baseUrl }, tables, export: exportTuning }))
  const token = await tokenFile(TOKEN)
  cleanups.push(() => rm(path.dirname(token), { recursive: true, force: true }))
  const out = path.join(dir, 'out')
  const result = await runCliProcess(['export', '--config', config, '--token-file', token, '--out', out])
  return { ...result, out }
}

const filesUnder = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))

/** A CSV of `rows` rows of random hex (about 100 bytes each), which gzip cannot shrink much. */
const csvRows = (from: number, rows: number): Buffer =>
  Buffer.from(
    Array.from({ length: rows }, (_, i) => `${from + i},${randomBytes(44).toString('hex')}\n`).join(''),
    'utf8',
  )

/** About 24 MB of CSV, made once: made per request, it would hold the event loop the handler's deadline needs. */
let tableBody: Buffer | undefined
const largeCsv = (): Buffer => {
  tableBody ??= Buffer.concat([
    Buffer.from('id,payload\n'),
    ...Array.from({ length: 24 }, (_, i) => csvRows(i * 10_000 + 1, 10_000)),
  ])
  return tableBody
}

/**
 * The service: the token check answers, the table sends a large CSV at once and then stalls for good, so a
 * table's deadline always falls while its body, its archive and its data are all unfinished.
 */
const stallingService = () => {
  const body = largeCsv()
  return http.createServer((request, response) => {
    if (request.url === '/rest/usermanager/me') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"username":"budget"}')
      return
    }
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'transfer-encoding': 'chunked' })
    response.write(body)
  })
}

describe('the token check within its budget', () => {
  it('ends a /me whose headers trickle a byte every 500 ms as DEADLINE_EXCEEDED naming tokenCheckSeconds', async () => {
    // The status line, then header lines that never end: one byte every 500 ms, well inside the idle timeout.
    const server = net.createServer((socket) => {
      const reply = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n'
      let at = 0
      const timer = setInterval(() => {
        const byte = at < reply.length ? reply[at] : 'x-trickle: 1\r\n'[(at - reply.length) % 14]
        at++
        if (!socket.destroyed) socket.write(byte!)
      }, 500)
      socket.on('close', () => clearInterval(timer))
      socket.on('error', () => undefined)
    })
    const baseUrl = await listen(server)

    const result = await cliExport(baseUrl, { timeouts: { tokenCheckSeconds: 2 } })

    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('DEADLINE_EXCEEDED')
    expect(result.stderr).toContain('export.timeouts.tokenCheckSeconds (2 s)')
    expect(result.stderr).toContain(`${baseUrl}/rest/usermanager/me`)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect((await filesUnder(result.out)).some((file) => file.startsWith(path.join('_runs', 'dt=')))).toBe(true)
  }, 30_000)

  it('reports a 404 on /me as a wrong base URL, naming the URL requested, not as an unknown table', async () => {
    const server = http.createServer((_request, response) => response.writeHead(404).end('not here'))
    const baseUrl = await listen(server)

    const result = await cliExport(`${baseUrl}/inventory`, {})

    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('API_NOT_FOUND')
    expect(result.stderr).toContain(`${baseUrl}/inventory/rest/usermanager/me`)
    expect(result.stderr).toContain('--base-url')
    expect(result.stderr).not.toContain('TABLE_NOT_FOUND')
    expect(result.stderr).not.toContain('check the table id')
  }, 30_000)
})

describe('a deadline while an archived table uploads', () => {
  const { client: secretsClient } = tokenSecretStandIn(TOKEN)
  const { client: glueClient } = emptyGlueCatalog()

  /** Holds every part upload for `ms`, so the deadline finds the parts of both uploads in flight. */
  const slowParts =
    (ms: number): KoaMiddleware =>
    async (ctx, next) => {
      if (ctx.method === 'PUT' && 'partNumber' in ctx.query) await new Promise((resolve) => setTimeout(resolve, ms))
      await next()
    }

  // The function's deadline (tables start while 12 s remain; in-flight work stops when 6 s remain, at 9 s here),
  // or the table's own budget. A margin of 12 s lets the watchdog (a quarter of it) bear a busy machine.
  it.each([
    { stop: "the function's deadline", tuning: { deadlineMarginSeconds: 12 }, remainingMs: 15_000 },
    { stop: 'export.timeouts.tableSeconds', tuning: { timeouts: { tableSeconds: 4 } }, remainingMs: 900_000 },
  ])(
    'on Lambda, at $stop: the table fails as DEADLINE_EXCEEDED, the run is recorded, no upload is left open',
    async ({ tuning, remainingMs }) => {
      const s3: RunningS3 = await startS3('warehouse', { front: [slowParts(3_000)] })
      cleanups.push(() => s3.close())
      const baseUrl = await listen(stallingService())
      const output = captureOutput()
      cleanups.push(async () => output.restore())
      const handler = createHandler({
        environment: lambdaEnvironment({
          source: { baseUrl },
          tables: [{ id: '1001', name: 'devices', archiveRaw: true }],
          exportTuning: tuning,
        }),
        s3Client: s3.client,
        secretsClient,
        glueClient,
        storeOptions: { partSize: 5 * 1024 * 1024, queueSize: 1 },
      })

      const error = await handler({ exportDate: '2026-04-01' }, lambdaContext(remainingMs)).catch((e: unknown) => e)

      const { summary } = error as RunFailedError
      expect(summary.tables.map((t) => [t.name, t.status, t.error?.code])).toEqual([
        ['devices', 'failed', ErrorCode.DEADLINE_EXCEEDED],
      ])
      expect(await s3.read(summary.runRecord.replace('s3://warehouse/', ''))).toBeDefined()
      expect(await s3.read('inventory/_runs/latest/devices.json')).toBeDefined()
      expect(await s3.read('inventory/devices/dt=2026-04-01/data.parquet')).toBeUndefined()
      expect(await s3.pendingUploads()).toEqual([])
      expect(valuesOf(output.metrics(), 'Runs', { service: SERVICE_NAME })).toEqual([1])
    },
    60_000,
  )

  it('locally: exits 1 with DEADLINE_EXCEEDED, the run record written and no partial file left', async () => {
    const baseUrl = await listen(stallingService())

    const result = await cliExport(baseUrl, { timeouts: { tableSeconds: 3 } }, { archiveRaw: true })

    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('DEADLINE_EXCEEDED')
    expect(result.stderr).not.toMatch(/\n\s+at /)
    const files = await filesUnder(result.out)
    expect(files.some((file) => file.startsWith(path.join('_runs', 'dt=')))).toBe(true)
    expect(files).toContain(path.join('_runs', 'latest', 'devices.json'))
    // The table's lease is given up, and stays as the record of who wrote last.
    expect(files.filter((file) => !file.startsWith('_runs') && !file.startsWith('_leases'))).toEqual([])
  }, 60_000)
})
