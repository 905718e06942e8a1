/**
 * Upstream text never becomes our output: a hostile service's header, cells and user record, run through the real
 * CLI, reach stdout and stderr with their escape sequences, line breaks and bidi controls shown as escapes.
 */

import { rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCliProcess, runCommandInProcess, tempDir, tokenFile } from '../support/cli.ts'

/** A line a hostile service would like to see printed as one of ours. */
const FORGED = 'next step: run curl x | sh'
const CLEAR_SCREEN = '\x1b[2J'
/** ESC, CR, LF, a C1 CSI and a right-to-left override: none may reach the terminal raw. */
const RAW = /[\x1b\r\u009b\u202e]/

const USER = {
  username: `api${CLEAR_SCREEN}\r\n${FORGED}`,
  displayName: 'Mallory \u202eevil\u202c',
  email: 'm\u009b2J@example.com',
}
/** `count` is forced to bigint, so the second row's cell is quoted by VALUE_OUT_OF_RANGE. */
const FORCED_CSV = `id,${CLEAR_SCREEN}name,count\r\n1,a,5\r\n2,b,"\r\n${FORGED}"\r\n`
/** The same cells as plain strings: the table exports, and `query` prints them. */
const STRING_CSV = `id,${CLEAR_SCREEN}name,note\r\n1,a,"${CLEAR_SCREEN}\r\n${FORGED}"\r\n`

let server: http.Server
let baseUrl: string
let work: string
let token: string

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === '/rest/usermanager/me') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(USER))
      return
    }
    const csv = { '/rest/tables/1/csv': FORCED_CSV, '/rest/tables/2/csv': STRING_CSV }[request.url ?? '']
    if (csv === undefined) return void response.writeHead(404).end()
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(csv)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  work = await tempDir('terminal-text-')
  token = await tokenFile('terminal-text-token')
})
afterAll(async () => {
  server.close()
  await rm(work, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

const configFile = async (name: string, tables: readonly object[]): Promise<string> => {
  const file = path.join(work, `${name}.json`)
  await writeFile(file, JSON.stringify({ source: { baseUrl }, tables }))
  return file
}
const forcedTable = { id: '1', name: 'forced', columnTypes: { count: 'bigint' } }
const stringTable = { id: '2', name: 'notes' }

/** Asserts that no raw control character and no forged line reached the output. */
const expectOnlyOurLines = (text: string) => {
  expect(text).not.toMatch(RAW)
  expect(text.split('\n').filter((line) => line.trimStart().startsWith(FORGED))).toEqual([])
}

describe('upstream text on the terminal', () => {
  it('check shows the user record, a header and a quoted cell escaped, with only its own next step lines', async () => {
    const config = await configFile('check', [forcedTable, stringTable])
    const result = await runCliProcess(['check', '--config', config, '--token-file', token], { NO_COLOR: '1' })
    expectOnlyOurLines(result.stdout + result.stderr)
    expect(result.stdout).toContain(`it belongs to api\\x1b[2J\\r\\n${FORGED} (Mallory \\u202eevil\\u202c, m\\x9b2J@`)
    expect(result.stdout).toContain('"\\x1b[2Jname"')
    expect(result.stdout).toMatch(
      /\[VALUE_OUT_OF_RANGE\] table 1: row 2: "\\r\\nnext step: run curl x \| sh" in column/,
    )
    // Our own next step still gets its own line.
    expect(result.stdout).toMatch(/^ {4}next step: remove the column from "columnTypes"/m)
    expect(result.exitCode).toBe(1)
  })

  it('an export quotes a bad cell escaped in its text log, and keeps the JSON log valid JSON line by line', async () => {
    const config = await configFile('export', [forcedTable])
    const text = await runCliProcess(['export', '--config', config, '--token-file', token, '--out', work], {
      NO_COLOR: '1',
    })
    expectOnlyOurLines(text.stdout + text.stderr)
    expect(text.stderr).toContain(`[VALUE_OUT_OF_RANGE] table 1: row 2: "\\r\\n${FORGED}"`)
    expect(text.exitCode).toBe(1)

    const json = await runCliProcess(
      ['export', '--config', config, '--token-file', token, '--out', work, '--log-format', 'json'],
      { NO_COLOR: '1' },
    )
    expect(json.stderr).not.toMatch(RAW)
    const events = json.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { message: string; error?: { code: string; message: string } })
    const failed = events.find((event) => event.error?.code === 'VALUE_OUT_OF_RANGE')
    expect(failed?.error?.message).toContain(`row 2: "\\r\\n${FORGED}"`)
    expect(json.exitCode).toBe(1)
  })

  it("query's table format shows a cell's escape sequence and line break as escapes", async () => {
    const out = path.join(work, 'warehouse')
    const config = await configFile('strings', [stringTable])
    const exported = await runCliProcess(['export', '--config', config, '--token-file', token, '--out', out], {
      NO_COLOR: '1',
    })
    expect(exported.exitCode).toBe(0)
    const result = await runCommandInProcess('query', ['--out', out, 'SELECT note FROM notes'])
    expectOnlyOurLines(result.stdout + result.stderr)
    expect(result.stdout).toContain(`\\x1b[2J\\r\\n${FORGED.slice(0, 20)}`)
    expect(result.exitCode).toBe(0)

    // DuckDB's own message spans lines (the statement, a caret): joined, not shown as escapes.
    const failed = await runCommandInProcess('query', ['--out', out, 'SELEC 1'])
    expect(failed.stderr).toMatch(/^error \[QUERY_FAILED\]: the query failed: Parser Error: .* LINE 1: SELEC 1 \^$/m)
    expect(failed.exitCode).toBe(1)
  })
})
