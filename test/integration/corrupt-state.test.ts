/**
 * State files are validated on read: a schema registry or run index entry of the wrong shape fails the table with
 * STATE_CORRUPT naming the object and the next step, on one line, and nothing is written from it. Through the real
 * local export against the stand-in.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const FIRST = '2026-03-01'
const SECOND = '2026-03-02'
const REGISTRY = '_schemas/devices.json'
const INDEX = '_runs/latest/devices.json'

let emulator: RunningEmulator
let token: string
let out: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 40, software: 40, users: 40 } }) })
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

const exportDevices = (date: string) =>
  runExportInProcess([
    '--base-url',
    emulator.baseUrl,
    '--table',
    '1001=devices',
    '--token-file',
    token,
    '--out',
    out,
    '--date',
    date,
  ])

const read = (key: string) => readFile(path.join(out, key))
const write = (key: string, body: string) => writeFile(path.join(out, key), body)

/** The table's FAILED line, asserting it is the only line naming the failure. */
const failureLine = (stderr: string): string => {
  const lines = stderr.split('\n').filter((line) => line.startsWith('devices: FAILED'))
  expect(lines).toHaveLength(1)
  return lines[0]!
}

beforeEach(async () => {
  emulator.faults.clear()
  out = await tempDir('corrupt-state-')
  expect((await exportDevices(FIRST)).exitCode).toBe(0)
})

describe('a schema registry of the wrong shape', () => {
  it.each([
    ['exportDates as a string', (doc: Record<string, unknown>) => ({ ...doc, exportDates: FIRST }), 'exportDates'],
    ['columns as a string', (doc: Record<string, unknown>) => ({ ...doc, columns: 'oops' }), 'columns'],
    [
      'an unknown column type',
      (doc: Record<string, unknown>) => withFirstColumnType(doc, 'varchar'),
      'columns[0].type',
    ],
  ])('with %s fails the table with STATE_CORRUPT and is left as it was', async (_, change, field) => {
    const registry = JSON.stringify(change(JSON.parse((await read(REGISTRY)).toString())), null, 2)
    await write(REGISTRY, registry)

    const result = await exportDevices(SECOND)

    expect(result.exitCode).toBe(1)
    const line = failureLine(result.stderr)
    expect(line).toContain('[STATE_CORRUPT]')
    expect(line).toContain(`${REGISTRY} cannot be trusted: it does not have the shape the exporter writes: ${field}`)
    expect(result.stderr).toContain('restore _schemas/devices.json from an earlier S3 version')
    expect(result.stderr).toContain('locally delete it to rebuild it on the next run')
    expect((await read(REGISTRY)).toString()).toBe(registry)
    await expect(read(`devices/dt=${SECOND}/data.parquet`)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('cut short fails the table with STATE_CORRUPT on one line, quoting nothing of the file', async () => {
    const whole = (await read(REGISTRY)).toString()
    const truncated = whole.slice(0, whole.indexOf('"columns"') + 30)
    await write(REGISTRY, truncated)

    const result = await exportDevices(SECOND)

    expect(result.exitCode).toBe(1)
    expect(failureLine(result.stderr)).toBe(
      `devices: FAILED [STATE_CORRUPT] ${out}/${REGISTRY} cannot be trusted: it is not valid JSON (${Buffer.byteLength(truncated)} bytes; cut short or overwritten)`,
    )
    expect((await read(REGISTRY)).toString()).toBe(truncated)
  })

  it('deleted is rebuilt by the next run, as the hint says', async () => {
    await write(REGISTRY, '{')
    expect((await exportDevices(SECOND)).exitCode).toBe(1)
    const { rm } = await import('node:fs/promises')
    await rm(path.join(out, REGISTRY))

    expect((await exportDevices(SECOND)).exitCode).toBe(0)
    expect(JSON.parse((await read(REGISTRY)).toString())).toMatchObject({ lastExportDate: SECOND })
  })
})

describe('a run index entry of the wrong shape', () => {
  it('fails the table with STATE_CORRUPT before any request, and keeps the entry for a restore', async () => {
    const entry = (await read(INDEX)).toString()
    const corrupt = entry.replace(/"lastSuccess": \{/, '"lastSuccess": "yesterday", "was": {')
    await write(INDEX, corrupt)
    const before = emulator.requests.filter((r) => r.path.includes('/1001/')).length
    emulator.faults.always('1001', { kind: 'status', status: 500 })

    const result = await exportDevices(SECOND)

    expect(result.exitCode).toBe(1)
    expect(failureLine(result.stderr)).toContain(
      `[STATE_CORRUPT] ${out}/${INDEX} cannot be trusted: it does not have the shape the exporter writes: lastSuccess:`,
    )
    expect((await read(INDEX)).toString()).toBe(corrupt)
    expect(emulator.requests.filter((r) => r.path.includes('/1001/')).length).toBe(before)
  })

  it('does not hold back other tables of the run', async () => {
    await write(INDEX, '{"table": "devices"')

    const result = await runExportInProcess([
      '--base-url',
      emulator.baseUrl,
      '--table',
      '1001=devices',
      '--table',
      '1003',
      '--token-file',
      token,
      '--out',
      out,
      '--date',
      SECOND,
    ])

    expect(result.exitCode).toBe(1)
    expect(failureLine(result.stderr)).toContain('[STATE_CORRUPT]')
    expect(JSON.parse((await read('_runs/latest/table_1003.json')).toString())).toMatchObject({
      status: 'succeeded',
      exportDate: SECOND,
    })
  })
})

const withFirstColumnType = (doc: Record<string, unknown>, type: string) => {
  const [first, ...rest] = doc.columns as Record<string, unknown>[]
  return { ...doc, columns: [{ ...first, type }, ...rest] }
}
