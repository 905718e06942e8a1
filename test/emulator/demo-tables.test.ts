import { describe, expect, it } from 'vitest'
import {
  DEMO_TOKEN,
  DEMO_TOKENS,
  DEMO_USERS,
  DemoTableId,
  demoTables,
  EmulatorError,
  type GeneratedTable,
} from '../../emulator/index.ts'

const generated = (tables: ReturnType<typeof demoTables>, id: string): GeneratedTable => {
  const table = tables.find((candidate) => candidate.id === id)
  if (table === undefined || !('rows' in table)) throw new Error(`no generated table ${id}`)
  return table
}

const rowsOf = (table: GeneratedTable) => [...table.rows()]

describe('demoTables', () => {
  it('offers the five demo tables with 1004 disabled', () => {
    const tables = demoTables()
    expect(tables.map((t) => [t.id, t.title, t.exportEnabled ?? true])).toEqual([
      ['1001', 'Devices', true],
      ['1002', 'Installed Software', true],
      ['1003', 'Users', true],
      ['1004', 'Retired Assets', false],
      ['1005', 'Payroll Devices', true],
    ])
  })

  it('produces the requested row counts, each row as wide as the header', () => {
    const tables = demoTables({ rows: { devices: 7, software: 3, users: 0 } })
    for (const [id, count] of [
      [DemoTableId.DEVICES, 7],
      [DemoTableId.SOFTWARE, 3],
      [DemoTableId.USERS, 0],
    ] as const) {
      const table = generated(tables, id)
      const rows = rowsOf(table)
      expect(rows).toHaveLength(count)
      for (const row of rows) expect(row).toHaveLength(table.columns.length)
    }
  })

  it('produces the same rows on every call for a seed, and different rows for another seed', () => {
    const devices = generated(demoTables({ seed: 42, rows: { devices: 50 } }), DemoTableId.DEVICES)
    expect(rowsOf(devices)).toEqual(rowsOf(devices))
    expect(rowsOf(generated(demoTables({ seed: 42, rows: { devices: 50 } }), DemoTableId.DEVICES))).toEqual(
      rowsOf(devices),
    )
    expect(rowsOf(generated(demoTables({ seed: 43, rows: { devices: 50 } }), DemoTableId.DEVICES))).not.toEqual(
      rowsOf(devices),
    )
  })

  it('generates rows lazily, so a table of a billion rows costs nothing until it is read', () => {
    const devices = generated(demoTables({ rows: { devices: 1_000_000_000 } }), DemoTableId.DEVICES)
    const iterator = devices.rows()[Symbol.iterator]()
    expect(iterator.next().value?.[0]).toBe('000001')
  })

  it('refers the software installs to existing device ids', () => {
    const tables = demoTables({ rows: { devices: 20, software: 200 } })
    const ids = new Set(rowsOf(generated(tables, DemoTableId.DEVICES)).map((row) => row[0]))
    expect(rowsOf(generated(tables, DemoTableId.SOFTWARE)).every((row) => ids.has(row[0] ?? ''))).toBe(true)
  })

  it.each([
    ['2026-05-04', 2500, 10_000],
    ['2026-11-23', 20, 200],
  ])(
    'lists a title once per device, as the demo key (device_id, software_name) says (%s, %i devices)',
    (date, devices, software) => {
      const tables = demoTables({ date, rows: { devices, software } })
      const keys = rowsOf(generated(tables, DemoTableId.SOFTWARE)).map((row) => `${row[0]}\t${row[1]}`)
      expect(new Set(keys).size).toBe(keys.length)
    },
  )

  it.each([
    [{ seed: 1.5 }, 'seed must be an integer, got 1.5'],
    [{ rows: { devices: -1 } }, 'rows.devices must be a non-negative integer, got -1'],
    [{ rows: { printers: 5 } as never }, 'rows.printers is not a demo table'],
  ])('rejects the options %j with a coded error', (options, problem) => {
    expect(() => demoTables(options)).toThrow(EmulatorError)
    expect(() => demoTables(options)).toThrow(problem)
  })
})

describe('demo users', () => {
  it('gives each demo token to one user, with the valid token reading every table', () => {
    const byToken = new Map(DEMO_USERS.map((user) => [user.token, user]))
    expect(byToken.size).toBe(DEMO_USERS.length)
    expect(DEMO_TOKEN).toBe(DEMO_TOKENS.valid)
    expect(byToken.get(DEMO_TOKENS.valid)).toMatchObject({ username: 'api-export', status: 'active', tables: 'all' })
    expect(byToken.get(DEMO_TOKENS.limited)?.tables).not.toContain(DemoTableId.PAYROLL)
    expect(byToken.get(DEMO_TOKENS.revoked)?.status).toBe('revoked')
    expect(byToken.get(DEMO_TOKENS.expired)?.status).toBe('expired')
  })
})
