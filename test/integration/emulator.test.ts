import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { parse } from 'csv-parse/sync'
import ExcelJS from 'exceljs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DEMO_TOKEN,
  DEMO_TOKENS,
  demoTables,
  type RunningEmulator,
  type SavedTable,
  startInventoryEmulator,
} from '../../emulator/index.ts'
import { typedCell } from '../../emulator/xlsx.ts'

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())

/** GET with the `token` header; null sends none. */
const get = (path: string, token: string | null = DEMO_TOKEN, base = emulator.baseUrl): Promise<Response> =>
  fetch(`${base}${path}`, { headers: token === null ? {} : { token } })

const bytesOf = async (path: string, base?: string): Promise<Buffer> =>
  Buffer.from(await (await get(path, DEMO_TOKEN, base)).arrayBuffer())

const csvRecords = async (tableId: string): Promise<string[][]> =>
  parse(await (await get(`/rest/tables/${tableId}/csv`)).text()) as string[][]

/** Opens a started emulator for one test and always closes it. */
const withEmulator = async (run: (other: RunningEmulator) => Promise<void>, tables?: SavedTable[]): Promise<void> => {
  const other = await startInventoryEmulator(tables === undefined ? {} : { tables })
  try {
    await run(other)
  } finally {
    await other.close()
  }
}

describe('the API document', () => {
  it('serves an OpenAPI 3 document at /apidoc without a token', async () => {
    const response = await get('/apidoc', null)
    const doc = (await response.json()) as {
      openapi: string
      servers: { url: string }[]
      paths: Record<string, unknown>
      components: { securitySchemes: Record<string, unknown> }
    }
    expect(response.status).toBe(200)
    expect(doc.openapi).toMatch(/^3\.0\./)
    expect(doc.components.securitySchemes.token).toEqual({ type: 'apiKey', in: 'header', name: 'token' })
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/rest/usermanager/me', '/rest/tables/{tableId}/csv', '/rest/tables/{tableId}/xlsx']),
    )
    expect(doc.servers[0]?.url).toBe(emulator.baseUrl)
  })
})

describe('authentication and permissions', () => {
  it('returns the owner of a valid token from /rest/usermanager/me', async () => {
    const response = await get('/rest/usermanager/me')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      id: 7,
      username: 'api-export',
      displayName: 'API Export (Athena)',
      email: 'api-export@corp.example.com',
      roles: expect.arrayContaining(['api']),
    })
  })

  it.each([
    ['a missing', null, 'missing token header'],
    ['an unknown', 'not-a-token', 'invalid token'],
    ['a revoked', DEMO_TOKENS.revoked, 'token revoked'],
    ['an expired', DEMO_TOKENS.expired, 'token expired'],
  ])('answers 401 with a JSON error for %s token', async (_, token, reason) => {
    for (const path of ['/rest/usermanager/me', '/rest/tables/1001/csv', '/rest/tables/1001/xlsx']) {
      const response = await get(path, token)
      expect(response.status).toBe(401)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await response.json()).toEqual({ error: reason })
    }
  })

  it('answers 401 for a token once it is revoked with revokeToken', async () => {
    await withEmulator(async (other) => {
      expect((await get('/rest/usermanager/me', DEMO_TOKEN, other.baseUrl)).status).toBe(200)
      other.revokeToken(DEMO_TOKEN)
      expect((await get('/rest/usermanager/me', DEMO_TOKEN, other.baseUrl)).status).toBe(401)
      expect((await get('/rest/tables/1001/csv', DEMO_TOKEN, other.baseUrl)).status).toBe(401)
    })
  })

  it('answers 403 when the limited user exports a table it may not read', async () => {
    expect((await get('/rest/tables/1005/csv', DEMO_TOKENS.limited)).status).toBe(403)
    expect((await get('/rest/tables/1005/xlsx', DEMO_TOKENS.limited)).status).toBe(403)
    expect((await get('/rest/tables/1001/csv', DEMO_TOKENS.limited)).status).toBe(200)
    expect((await get('/rest/tables/1005/csv', DEMO_TOKENS.valid)).status).toBe(200)
  })
})

describe('errors', () => {
  it('answers 404 for an unknown table id', async () => {
    const response = await get('/rest/tables/424242/csv')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: 'table 424242 not found' })
  })

  it('answers 404 for a table whose export is disabled', async () => {
    expect((await get('/rest/tables/1004/csv')).status).toBe(404)
    expect((await get('/rest/tables/1004/xlsx')).status).toBe(404)
  })

  it('answers 404 for an unknown path and 405 for a method other than GET', async () => {
    expect((await get('/rest/tables/1001/json')).status).toBe(404)
    const post = await fetch(`${emulator.baseUrl}/rest/tables/1001/csv`, {
      method: 'POST',
      headers: { token: DEMO_TOKEN },
    })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET')
  })
})

describe('CSV export', () => {
  it.each([
    ['1001', 'Device ID', 20, 2_500],
    ['1002', 'Software Name', 9, 10_000],
    ['1003', 'Display Name', 8, 800],
    ['1005', 'Serial Number', 20, 120],
  ])('serves table %s as a chunked CSV with column "%s", %i columns and %i rows', async (id, column, width, rows) => {
    const response = await get(`/rest/tables/${id}/csv`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${id}.csv"`)
    expect(response.headers.get('content-length')).toBeNull()
    const records = parse(await response.text()) as string[][]
    expect(records[0]).toContain(column)
    expect(records[0]).toHaveLength(width)
    expect(records).toHaveLength(rows + 1)
  })

  it('writes quoted commas, doubled quotes, line breaks, non-ASCII text and leading zeros', async () => {
    const text = (await bytesOf('/rest/tables/1001/csv')).toString('utf8')
    const [header, ...rows] = parse(text) as string[][]
    const cells = rows.flat()
    expect(header).toEqual(expect.arrayContaining(['RAM (GB)', 'Price (EUR)', 'Virtual?', 'Last Seen']))
    expect(text.endsWith('\r\n')).toBe(true)
    expect(text).toContain('"Latitude 7440, 14"""')
    expect(cells.some((cell) => cell.includes('\r\n'))).toBe(true)
    expect(cells.some((cell) => /[^\r]\n/.test(cell))).toBe(true)
    expect(cells).toEqual(expect.arrayContaining(['München', 'São Paulo', 'Kraków', 'Zürich', '東京']))
    expect(rows[416]?.[0]).toBe('000417')
    expect(cells.some((cell) => /^00\d{10}$/.test(cell))).toBe(true)
    expect(rows.every((row) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(row[14] ?? ''))).toBe(true)
  })

  it('serves a raw CSV table byte for byte with a Content-Length and its content type', async () => {
    const raw = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a;b\r\n1;2;3\r\n', 'utf16le')])
    emulator.setTable({ id: 'raw-utf16', title: 'Raw', rawCsv: raw, contentType: 'text/csv; charset=utf-16le' })
    const response = await get('/rest/tables/raw-utf16/csv')
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-16le')
    expect(response.headers.get('content-length')).toBe(String(raw.byteLength))
    expect(Buffer.from(await response.arrayBuffer())).toEqual(raw)
  })

  it('serves a replaced table on the next request and 404 once it is removed', async () => {
    emulator.setTable({ id: 'swap', title: 'Swap', columns: ['A'], rows: () => [['1']] })
    expect(await csvRecords('swap')).toEqual([['A'], ['1']])
    emulator.setTable({ id: 'swap', title: 'Swap', columns: ['A', 'B'], rows: () => [['1', null]] })
    expect(await csvRecords('swap')).toEqual([
      ['A', 'B'],
      ['1', ''],
    ])
    emulator.removeTable('swap')
    expect((await get('/rest/tables/swap/csv')).status).toBe(404)
  })
})

type WorkbookCell = ExcelJS.CellValue

const workbookRows = async (path: string): Promise<{ name: string; rows: WorkbookCell[][]; formats: string[][] }> => {
  const response = await get(path)
  expect(response.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
  const workbook = new ExcelJS.Workbook()
  await workbook.xlsx.load(await response.arrayBuffer())
  expect(workbook.worksheets).toHaveLength(1)
  const sheet = workbook.worksheets[0]!
  const rows: WorkbookCell[][] = []
  const formats: string[][] = []
  sheet.eachRow({ includeEmpty: true }, (row) => {
    const cells = Array.from({ length: sheet.columnCount }, (_, i) => row.getCell(i + 1))
    rows.push(cells.map((cell) => cell.value ?? null))
    formats.push(cells.map((cell) => cell.numFmt ?? ''))
  })
  return { name: sheet.name, rows, formats }
}

describe('XLSX export', () => {
  it.each(['1001', '1003'])("serves table %s as a real workbook with the CSV's values in typed cells", async (id) => {
    const { rows } = await workbookRows(`/rest/tables/${id}/xlsx`)
    const csv = await csvRecords(id)
    // A workbook reader undoes the `_x000D_` escape of a carriage return, so text reads back as the CSV's.
    const typed = (text: string) => {
      const { value } = typedCell(text)
      return typeof value === 'string' ? text : value
    }
    expect(rows).toEqual(csv.map((row) => row.map(typed)))
  })

  it('writes numbers, dates with a date format, booleans and text as the service does', async () => {
    const { rows, formats } = await workbookRows('/rest/tables/1001/xlsx')
    const header = rows[0] as string[]
    const column = (name: string) => header.indexOf(name)
    const first = rows[1]!
    expect(typeof first[column('RAM (GB)')]).toBe('number')
    expect(first[column('Purchase Date')]).toBeInstanceOf(Date)
    expect(formats[1]![column('Purchase Date')]).toBe('yyyy-mm-dd')
    expect(first[column('Last Seen')]).toBeInstanceOf(Date)
    expect(formats[1]![column('Last Seen')]).toBe('yyyy-mm-dd hh:mm:ss')
    expect(typeof first[column('Virtual?')]).toBe('boolean')
    expect(first[column('Device ID')]).toMatch(/^0\d+$/) // zero-padded ids stay text
    expect(formats[1]![column('Price (EUR)')]).toBe('0.00')
  })

  it.each([
    ['42', { value: 42 }],
    ['1234.50', { value: 1234.5, numFmt: '0.00' }],
    ['000417', { value: '000417' }],
    ['12345678901234567', { value: '12345678901234567' }],
    ['TRUE', { value: true }],
    ['2024-02-29', { value: new Date('2024-02-29T00:00:00Z'), numFmt: 'yyyy-mm-dd' }],
    ['2024-02-30', { value: '2024-02-30' }],
    ['2026-10-01T12:00:00+02:00', { value: new Date('2026-10-01T10:00:00Z'), numFmt: 'yyyy-mm-dd hh:mm:ss' }],
    ['2026-10-01 12:00:00.250', { value: new Date('2026-10-01T12:00:00.250Z'), numFmt: 'yyyy-mm-dd hh:mm:ss.000' }],
    ['line\r\nbreak', { value: 'line_x000D_\nbreak' }],
  ])('types the CSV text %j as %j', (text, cell) => {
    expect(typedCell(text)).toEqual(cell)
  })

  it('serves a raw CSV table as a workbook by parsing it simply', async () => {
    emulator.setTable({ id: 'raw-semi', title: 'Raw: semicolons', rawCsv: '\uFEFFa;b\r\n"x;y";2\r\n' })
    expect(await workbookRows('/rest/tables/raw-semi/xlsx')).toMatchObject({
      name: 'Raw  semicolons',
      rows: [
        ['a', 'b'],
        ['x;y', 2],
      ],
    })
  })

  it("serves a table's own workbook byte for byte", async () => {
    const bytes = Buffer.from('PK\x03\x04 not really a workbook')
    emulator.setTable({ id: 'raw-xlsx', title: 'Raw workbook', rawCsv: 'a\n', rawXlsx: bytes })
    const response = await get('/rest/tables/raw-xlsx/xlsx')
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes)
  })
})

describe('determinism', () => {
  it('gives the same CSV bytes for the same seed and different bytes for another seed', async () => {
    const first = await bytesOf('/rest/tables/1002/csv')
    expect(await bytesOf('/rest/tables/1002/csv')).toEqual(first)
    await withEmulator(
      async (same) => {
        expect(await bytesOf('/rest/tables/1002/csv', same.baseUrl)).toEqual(first)
      },
      demoTables({ seed: 1 }),
    )
    await withEmulator(
      async (other) => {
        expect(await bytesOf('/rest/tables/1002/csv', other.baseUrl)).not.toEqual(first)
      },
      demoTables({ seed: 2 }),
    )
  })
})

describe('streaming', () => {
  it('streams a 200,000-row table without the heap growing with the table size', async () => {
    // A forced collection before each sample measures what is retained, not garbage awaiting collection.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const mib = 1024 * 1024
    await withEmulator(
      async (big) => {
        gc()
        const baseline = process.memoryUsage()
        const response = await get('/rest/tables/1001/csv', DEMO_TOKEN, big.baseUrl)
        const reader = response.body!.getReader()
        let received = 0
        let nextSample = 0
        let heapGrowth = 0
        let externalGrowth = 0
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          received += chunk.value.byteLength
          if (received < nextSample) continue
          nextSample += 2 * mib
          // Reading slowly for a moment lets a server that ignored backpressure pile the table up in memory.
          await new Promise((resolve) => setTimeout(resolve, 20))
          gc()
          const now = process.memoryUsage()
          heapGrowth = Math.max(heapGrowth, now.heapUsed - baseline.heapUsed)
          externalGrowth = Math.max(externalGrowth, now.external - baseline.external)
        }
        expect(received).toBeGreaterThan(40 * mib)
        expect(heapGrowth).toBeLessThan(16 * mib)
        expect(externalGrowth).toBeLessThan(24 * mib)
      },
      demoTables({ rows: { devices: 200_000 } }),
    )
  })
})
