/**
 * Through the real export against a small hostile service: after a good export of a date, a 200 whose body is a
 * page, an XML or a JSON document (however it is labelled, however its first bytes are split into chunks) fails
 * the table with NOT_CSV and leaves the date's object and `<table>_latest` as they were. A charset declared in
 * Content-Type is read (UTF-16 without a byte-order mark lands exactly), gzip, br and deflate bodies land exactly,
 * and a cut or unknown compressed body fails coded. Real CSVs that start with blank lines or `sep=;` still land.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { type CliResult, runCommandInProcess, runExportInProcess, tempDir } from '../support/cli.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'

const DATE = '2026-03-14'
const TABLE = { id: '3001', name: 'devices' } as const
const GOOD_CSV = 'Device ID,Owner\r\n1,Ada\r\n2,Grace\r\n3,Zoë\r\n'
const GOOD_ROWS = [
  // device_id is a BIGINT: `query --format json` writes it as a JSON number.
  { device_id: 1, owner: 'Ada' },
  { device_id: 2, owner: 'Grace' },
  { device_id: 3, owner: 'Zoë' },
]
const TOKEN = 'body-recognition-token'

/** What the service answers for the table: headers, then each chunk written on its own; `cut` ends the socket. */
interface Reply {
  readonly headers: Readonly<Record<string, string>>
  readonly chunks: readonly (string | Buffer)[]
  readonly cut?: boolean
}

let reply: Reply
const seenHeaders: http.IncomingHttpHeaders[] = []
let server: http.Server
let baseUrl: string
let folders: string[] = []

const csvReply = (body: string | Buffer, headers: Record<string, string> = {}): Reply => ({
  headers: { 'content-type': 'text/csv; charset=utf-8', ...headers },
  chunks: [body],
})

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    if (request.url === '/rest/usermanager/me') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{"username":"api-export","email":"api@example.com"}')
      return
    }
    if (request.url !== `/rest/tables/${TABLE.id}/csv`) {
      response.writeHead(404).end()
      return
    }
    seenHeaders.push(request.headers)
    const { headers, chunks, cut } = reply
    response.writeHead(200, { ...headers, 'transfer-encoding': 'chunked' })
    for (const chunk of chunks) {
      response.write(chunk)
      // Each chunk on its own, so the client sees the body split where the case splits it.
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
    if (cut) response.socket?.destroy()
    else response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  reply = csvReply(GOOD_CSV)
  seenHeaders.length = 0
})
afterEach(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })))
  folders = []
})

interface Workspace {
  readonly out: string
  readonly args: readonly string[]
  /** `npm run reprocess` of the date, from the raw archive. */
  readonly reprocessArgs: readonly string[]
}

const workspace = async (table: Record<string, unknown> = {}): Promise<Workspace> => {
  const out = await tempDir('body-recognition-out-')
  const etc = await tempDir('body-recognition-etc-')
  folders.push(out, etc)
  const config = path.join(etc, 'config.json')
  const tokenPath = path.join(etc, 'token')
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl },
      tables: [{ ...TABLE, archiveRaw: true, ...table }],
      export: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    }),
  )
  await writeFile(tokenPath, TOKEN)
  return {
    out,
    args: ['--config', config, '--token-file', tokenPath, '--out', out, '--date', DATE],
    reprocessArgs: ['--config', config, '--out', out, '--date', DATE],
  }
}

const exportOnce = (ws: Workspace): Promise<CliResult> => runExportInProcess(ws.args)

/** The table's outcome in the run record the latest run wrote. */
const latestOutcome = async (ws: Workspace): Promise<TableOutcome> => {
  const folder = path.join(ws.out, '_runs', `dt=${DATE}`)
  const records = await Promise.all(
    (await readdir(folder))
      .filter((file) => file.endsWith('.json'))
      .map(async (file) => JSON.parse(await readFile(path.join(folder, file), 'utf8')) as RunRecord),
  )
  records.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt))
  return records.at(-1)!.tables[0]!
}

const dataObject = (ws: Workspace): Promise<Buffer> =>
  readFile(path.join(ws.out, TABLE.name, `dt=${DATE}`, 'data.parquet'))

const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

/** `npm run query` over the warehouse: the rows of `devices_latest`, as JSON. */
const latestRows = async (ws: Workspace): Promise<unknown> => {
  const result = await runCommandInProcess('query', [
    '--out',
    ws.out,
    '--format',
    'json',
    `SELECT device_id, owner FROM ${TABLE.name}_latest ORDER BY _source_row_number`,
  ])
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

const expectLanded = async (ws: Workspace, result: CliResult, rows: unknown = GOOD_ROWS): Promise<void> => {
  const outcome = await latestOutcome(ws)
  expect(result.exitCode, JSON.stringify(outcome.error)).toBe(0)
  expect(await latestRows(ws)).toEqual(rows)
}

const LOGIN = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please sign in</body></html>\n'

const notCsv: readonly { name: string; reply: Reply; message: RegExp }[] = [
  {
    name: 'a page that starts with <title>',
    reply: csvReply('<title>Sign in</title>\n<p>Please sign in</p>\n'),
    message: /markup/,
  },
  {
    name: 'a page that starts with a comment',
    reply: csvReply('<!-- login portal -->\n<html><body>Please sign in</body></html>\n'),
    message: /markup/,
  },
  {
    name: 'a page that starts with <script>',
    reply: csvReply('<script>location.href="/login"</script>\n'),
    message: /markup/,
  },
  {
    name: 'a first chunk of just CRLF, then <!DOCTYPE html>',
    reply: { headers: { 'content-type': 'text/csv' }, chunks: ['\r\n', LOGIN] },
    message: /markup/,
  },
  {
    name: 'a pretty-printed JSON error whose first chunk is "[\\n"',
    reply: { headers: { 'content-type': 'text/csv' }, chunks: ['[\n', '  {"error": "export failed"}\n]\n'] },
    message: /JSON/,
  },
  {
    name: 'an HTML page labelled text/plain',
    reply: { headers: { 'content-type': 'text/plain' }, chunks: [LOGIN] },
    message: /markup/,
  },
  {
    name: 'a JSON error labelled application/json',
    reply: { headers: { 'content-type': 'application/json' }, chunks: ['{"error":"export failed"}'] },
    message: /application\/json/,
  },
  {
    name: 'an application/xml body',
    reply: { headers: { 'content-type': 'application/xml' }, chunks: ['<error>denied</error>\n'] },
    message: /application\/xml/,
  },
  {
    name: 'a problem+json body',
    reply: { headers: { 'content-type': 'application/problem+json' }, chunks: ['{"title":"x"}'] },
    message: /application\/problem\+json/,
  },
  {
    name: 'gzip bytes without a Content-Encoding',
    reply: csvReply(gzipSync('Device ID,Owner\r\n1,Ada\r\n')),
    message: /gzip-compressed bytes without a Content-Encoding/,
  },
  {
    name: 'an XML document labelled text/csv',
    reply: csvReply('<?xml version="1.0"?>\n<error>denied</error>\n'),
    message: /markup/,
  },
]

describe('a 200 whose body is not a table', () => {
  it.each(notCsv)('$name: fails NOT_CSV and keeps the previous data', async (bad) => {
    const ws = await workspace()
    await expectLanded(ws, await exportOnce(ws))
    const before = digest(await dataObject(ws))

    reply = bad.reply
    const result = await exportOnce(ws)
    expect(result.exitCode).toBe(1)
    const outcome = await latestOutcome(ws)
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'NOT_CSV', failureClass: 'protocol' } })
    expect(outcome.error?.message).toMatch(bad.message)
    // What arrived is named, escaped: no raw line break or control character reaches the message.
    expect(outcome.error?.message).not.toMatch(/[\u0000-\u001f]/)
    expect(result.stderr).toMatch(new RegExp(`^${TABLE.name}: FAILED \\[NOT_CSV\\]`, 'm'))
    expect(result.stderr).not.toContain('Please sign in</body>')
    expect(digest(await dataObject(ws))).toBe(before)
    expect(await latestRows(ws)).toEqual(GOOD_ROWS)
  })
})

describe('a CSV that starts oddly', () => {
  it('lands when it starts with blank lines', async () => {
    const ws = await workspace()
    reply = { headers: { 'content-type': 'text/csv' }, chunks: ['\r\n', `\n\r\n${GOOD_CSV}`] }
    await expectLanded(ws, await exportOnce(ws))
  })

  it('lands when its first line is sep=;', async () => {
    const ws = await workspace()
    reply = csvReply('sep=;\r\nDevice ID;Owner\r\n1;Ada\r\n2;Grace\r\n3;Zoë\r\n')
    await expectLanded(ws, await exportOnce(ws))
    expect((await latestOutcome(ws)).delimiter).toBe(';')
  })

  it('names the line of a bad record after the blank lines and sep=;', async () => {
    const rows = 10
    const ws = await workspace()
    const body = Array.from({ length: rows }, (_, i) => `${i};note ${i}`).join('\r\n')
    // Two blank lines and the sep line: the header is on line 4, the first row on line 5.
    reply = csvReply(`\r\n\r\nsep=;\r\nDevice ID;Owner\r\n${body}\r\nbad;row;here\r\n`)
    const result = await exportOnce(ws)
    expect(result.exitCode).toBe(1)
    const outcome = await latestOutcome(ws)
    expect(outcome.error).toMatchObject({ code: 'ROW_FIELD_COUNT', line: 5 + rows })
  })

  it('lands when its header starts with a bracket', async () => {
    const ws = await workspace()
    reply = csvReply('[Device ID],Owner\r\n1,Ada\r\n')
    const result = await exportOnce(ws)
    expect(result.exitCode, JSON.stringify((await latestOutcome(ws)).error)).toBe(0)
  })
})

const utf16 = (text: string, order: 'le' | 'be'): Buffer => {
  const bytes = Buffer.from(text, 'utf16le')
  return order === 'le' ? bytes : bytes.swap16()
}

describe('the charset in Content-Type', () => {
  it.each(['le', 'be'] as const)('reads UTF-16%s without a byte-order mark exactly', async (order) => {
    const ws = await workspace()
    reply = csvReply(utf16(GOOD_CSV, order), { 'content-type': `text/csv; charset=utf-16${order}` })
    await expectLanded(ws, await exportOnce(ws))
    expect((await latestOutcome(ws)).encoding).toBe(`utf-16${order}`)
    // The date's object itself, read by a second reader: the names and values, not a NUL between each letter.
    const rows = await readWithHyparquet(await dataObject(ws))
    expect(rows.map(({ device_id, owner }) => [device_id, owner])).toEqual([
      [1n, 'Ada'],
      [2n, 'Grace'],
      [3n, 'Zoë'],
    ])
  })

  it('reads windows-1252 declared as charset=iso-8859-1', async () => {
    const ws = await workspace()
    reply = csvReply(Buffer.from(GOOD_CSV, 'latin1'), { 'content-type': 'text/csv; charset="ISO-8859-1"' })
    await expectLanded(ws, await exportOnce(ws))
  })

  it("lets the table's encoding override the charset", async () => {
    const ws = await workspace({ encoding: 'windows-1252' })
    reply = csvReply(Buffer.from(GOOD_CSV, 'latin1'), { 'content-type': 'text/csv; charset=utf-8' })
    await expectLanded(ws, await exportOnce(ws))
  })

  it('fails coded on a charset it cannot read, naming it', async () => {
    const ws = await workspace()
    reply = csvReply(GOOD_CSV, { 'content-type': 'text/csv; charset=x-no-such-set' })
    const result = await exportOnce(ws)
    expect(result.exitCode).toBe(1)
    const outcome = await latestOutcome(ws)
    expect(outcome.error).toMatchObject({ code: 'INVALID_ENCODING' })
    expect(outcome.error?.message).toContain('"x-no-such-set"')
  })

  it('rebuilds a UTF-16 date from its raw archive with the charset the export read', async () => {
    const ws = await workspace()
    reply = csvReply(utf16(GOOD_CSV, 'le'), { 'content-type': 'text/csv; charset=utf-16le' })
    await expectLanded(ws, await exportOnce(ws))
    const result = await runCommandInProcess('reprocess', ws.reprocessArgs)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(await latestRows(ws)).toEqual(GOOD_ROWS)
  })
})

describe('a compressed body', () => {
  it('asks for gzip, br and deflate', async () => {
    const ws = await workspace()
    await exportOnce(ws)
    expect(seenHeaders[0]?.['accept-encoding']).toBe('gzip, br, deflate')
  })

  it.each([
    ['gzip', gzipSync],
    ['br', brotliCompressSync],
    ['deflate', deflateSync],
  ] as const)('%s lands exactly, and archives and hashes the decoded CSV', async (coding, compress) => {
    const ws = await workspace()
    const compressed = compress(Buffer.from(GOOD_CSV))
    // Split inside the compressed stream, so the decoder is fed across chunks.
    reply = {
      headers: { 'content-type': 'text/csv', 'content-encoding': coding },
      chunks: [compressed.subarray(0, 7), compressed.subarray(7)],
    }
    await expectLanded(ws, await exportOnce(ws))
    const outcome = await latestOutcome(ws)
    expect(outcome.sha256).toBe(createHash('sha256').update(GOOD_CSV).digest('hex'))
    expect(outcome.bytesReceived).toBe(Buffer.byteLength(GOOD_CSV))
    const result = await runCommandInProcess('reprocess', ws.reprocessArgs)
    expect(result.exitCode, result.stderr).toBe(0)
  })

  it('a cut gzip body fails BODY_TRUNCATED and keeps the previous data', async () => {
    const ws = await workspace()
    await expectLanded(ws, await exportOnce(ws))
    const before = digest(await dataObject(ws))
    const compressed = gzipSync(Buffer.from(GOOD_CSV.repeat(50)))
    reply = {
      headers: { 'content-type': 'text/csv', 'content-encoding': 'gzip' },
      chunks: [compressed.subarray(0, compressed.length - 20)],
      cut: true,
    }
    const result = await exportOnce(ws)
    expect(result.exitCode).toBe(1)
    expect((await latestOutcome(ws)).error).toMatchObject({ code: 'BODY_TRUNCATED' })
    expect(digest(await dataObject(ws))).toBe(before)
  })

  it('a gzip body that ends early but framed whole fails coded', async () => {
    const ws = await workspace()
    const compressed = gzipSync(Buffer.from(GOOD_CSV.repeat(50)))
    reply = {
      headers: { 'content-type': 'text/csv', 'content-encoding': 'gzip' },
      chunks: [compressed.subarray(0, compressed.length - 20)],
    }
    const result = await exportOnce(ws)
    expect(result.exitCode).toBe(1)
    expect((await latestOutcome(ws)).error).toMatchObject({ code: 'BODY_TRUNCATED' })
  })

  it.each(['compress', 'zstd', 'gzip, x-custom'])(
    'Content-Encoding: %s fails coded, whatever the encoding setting',
    async (coding) => {
      const ws = await workspace({ encoding: 'windows-1252' })
      reply = csvReply(Buffer.from(GOOD_CSV, 'latin1'))
      await expectLanded(ws, await exportOnce(ws))
      const before = digest(await dataObject(ws))
      reply = { headers: { 'content-type': 'text/csv', 'content-encoding': coding }, chunks: [gzipSync(GOOD_CSV)] }
      const result = await exportOnce(ws)
      expect(result.exitCode).toBe(1)
      const outcome = await latestOutcome(ws)
      expect(outcome.error).toMatchObject({ code: 'UNEXPECTED_RESPONSE' })
      expect(outcome.error?.message).toContain('Content-Encoding')
      expect(digest(await dataObject(ws))).toBe(before)
    },
  )
})
