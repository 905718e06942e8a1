import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { mockClient } from 'aws-sdk-client-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { createHandler, type RunFailedError } from '../../functions/export/lambda/handler.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { captureOutput, lambdaContext, valuesOf } from '../support/emf.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DEVICES = 200

let emulator: RunningEmulator
let out: string
let token: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({
    tables: demoTables({ rows: { devices: DEVICES, software: 10, users: 40 } }),
  })
  out = await tempDir('guards-')
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(async () => {
  await emulator?.close()
})

/** `npm start` for one date against the stand-in, as the stand-in acts out that day. */
const exportDay = async (date: string, ...flags: string[]) => {
  emulator.upstream.setDate(date)
  const result = await runExportInProcess([
    ...['--base-url', emulator.baseUrl, '--table', '1001=devices', '--token-file', token],
    ...['--out', out, '--date', date, ...flags],
  ])
  const runId = /run (\S+) for dt=/.exec(result.stdout)?.[1]
  const record = JSON.parse(await readFile(path.join(out, '_runs', `dt=${date}`, `${runId}.json`), 'utf8')) as RunRecord
  const { rows } = await queryWarehouse(out, 'SELECT count(*) AS n, max(dt) AS dt FROM devices_latest')
  const [count, dt] = rows[0]!
  return { ...result, table: record.tables[0]!, latest: { rows: Number(count), dt: String(dt) } }
}

describe('upstream change guards over several days of the stand-in', () => {
  it('never holds the first export of a table', async () => {
    const day = await exportDay('2026-11-01')
    expect(day.exitCode).toBe(0)
    expect(day.table).toMatchObject({ status: 'succeeded', rows: DEVICES })
    expect(day.table.guards).toBeUndefined()
    expect(day.latest).toEqual({ rows: DEVICES, dt: '2026-11-01' })
  })

  it('publishes and warns when the row count falls between holdBelow and warnBelow', async () => {
    emulator.upstream.add({ tableId: '1001', from: '2026-11-02', keepRows: 0.4 })
    const day = await exportDay('2026-11-02')
    expect(day.exitCode).toBe(0)
    expect(day.table).toMatchObject({ status: 'succeeded', rows: 80 })
    expect(day.table.guards).toEqual([
      {
        code: 'ROW_COUNT_DROP',
        action: 'warned',
        message: '80 rows where the previous export (dt=2026-11-01) had 200: 40.0% of it, below warnBelow 0.5',
        previousExportDate: '2026-11-01',
        previousRows: 200,
        rows: 80,
        ratio: 0.4,
        threshold: 0.5,
      },
    ])
    expect(day.stderr).toContain('warning: devices: guards: ROW_COUNT_DROP warned: 80 rows where')
    expect(day.stdout).toMatch(/devices\s+ok \(ROW_COUNT_DROP warned\)/)
    expect(day.latest).toEqual({ rows: 80, dt: '2026-11-02' })
  })

  it('holds a drop below holdBelow: coded error naming both counts, nothing published, the latest view unmoved', async () => {
    emulator.upstream.add({ tableId: '1001', from: '2026-11-03', keepRows: 0.05 })
    const day = await exportDay('2026-11-03')
    expect(day.exitCode).toBe(1)
    expect(day.table).toMatchObject({
      status: 'failed',
      rows: 4,
      objects: [],
      guards: [{ code: 'ROW_COUNT_DROP', action: 'held', previousRows: 80, rows: 4, threshold: 0.1 }],
      error: { code: 'ROW_COUNT_DROP', failureClass: 'guard' },
    })
    expect(day.table.error?.message).toContain('held: 4 rows where the previous export (dt=2026-11-02) had 80')
    expect(day.table.error?.hint).toContain('--accept-changes')
    expect(day.stdout).toMatch(/devices\s+HELD ROW_COUNT_DROP/)
    expect(day.latest).toEqual({ rows: 80, dt: '2026-11-02' })
    await expect(readFile(path.join(out, 'devices', 'dt=2026-11-03', 'data.parquet'))).rejects.toThrow(/ENOENT/)
  })

  it('publishes the held snapshot with --accept-changes, and the next run compares with what was accepted', async () => {
    const accepted = await exportDay('2026-11-03', '--accept-changes')
    expect(accepted.exitCode).toBe(0)
    expect(accepted.table).toMatchObject({
      status: 'succeeded',
      rows: 4,
      guards: [{ code: 'ROW_COUNT_DROP', action: 'accepted', previousRows: 80, rows: 4 }],
    })
    expect(accepted.latest).toEqual({ rows: 4, dt: '2026-11-03' })

    // A column dropped and one renamed in the UI; 4 rows again, the same as the accepted snapshot.
    emulator.upstream.add({
      tableId: '1001',
      from: '2026-11-04',
      dropColumns: ['OS Version'],
      renameColumns: { Notes: 'Remarks' },
    })
    const next = await exportDay('2026-11-04')
    expect(next.exitCode).toBe(0)
    const rename = "a column renamed in the service's UI shows as one removed and one added"
    expect(next.table.guards).toEqual([
      {
        code: 'COLUMNS_REMOVED',
        action: 'warned',
        message: `2 columns removed since dt=2026-11-03: os_version ("OS Version"), notes ("Notes"); ${rename}`,
        previousExportDate: '2026-11-03',
        columns: ['os_version', 'notes'],
      },
      {
        code: 'COLUMNS_ADDED',
        action: 'warned',
        message: `1 column added since dt=2026-11-03: remarks ("Remarks"); ${rename}`,
        previousExportDate: '2026-11-03',
        columns: ['remarks'],
      },
    ])
    expect(next.latest).toEqual({ rows: 4, dt: '2026-11-04' })
  })

  it('always holds zero rows after a non-empty export', async () => {
    emulator.upstream.add({ tableId: '1001', from: '2026-11-05', keepRows: 0 })
    const day = await exportDay('2026-11-05')
    expect(day.exitCode).toBe(1)
    expect(day.table).toMatchObject({
      status: 'failed',
      rows: 0,
      guards: [{ code: 'ROW_COUNT_DROP', action: 'held', previousRows: 4, rows: 0, ratio: 0 }],
      error: { code: 'ROW_COUNT_DROP' },
    })
    expect(day.latest).toEqual({ rows: 4, dt: '2026-11-04' })
  })
})

describe('upstream change guards in the Lambda', () => {
  const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-token-AbCdEf'
  let s3: RunningS3
  beforeAll(async () => {
    s3 = await startS3('warehouse')
  })
  afterAll(async () => {
    await s3?.close()
  })

  const handler = () => {
    const secretsClient = new SecretsManagerClient({ region: 'us-east-1' })
    mockClient(secretsClient).on(GetSecretValueCommand).resolves({ SecretString: DEMO_TOKEN })
    const config = {
      source: { baseUrl: emulator.baseUrl },
      tables: [
        { id: '1003', name: 'users', guards: { columnsRemoved: 'hold' } },
        { id: '1002', name: 'installed_software' },
      ],
      export: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
    }
    return createHandler({
      environment: {
        EXPORT_CONFIG: JSON.stringify(config),
        WAREHOUSE_BUCKET: 'warehouse',
        TOKEN_SECRET_ARN: SECRET_ARN,
        POWERTOOLS_SERVICE_NAME: 'guards-test',
      },
      s3Client: s3.client,
      secretsClient,
      glueClient: emptyGlueCatalog().client,
    })
  }
  const record = async (date: string, runId: string) =>
    JSON.parse((await s3.read(`inventory/_runs/dt=${date}/${runId}.json`))!.toString()) as RunRecord

  it('holds a table set to hold on a removed column, logs it in one line, and publishes it on acceptChanges', async () => {
    emulator.upstream.setDate('2026-10-01')
    const output = captureOutput()
    try {
      await handler()({ exportDate: '2026-10-01' }, lambdaContext())
      emulator.upstream.add({ tableId: '1003', from: '2026-10-02', dropColumns: ['Department'] })
      emulator.upstream.setDate('2026-10-02')
      output.clear()
      const failure = (await handler()({ exportDate: '2026-10-02' }, lambdaContext()).catch((e) => e)) as RunFailedError
      expect(failure.code).toBe('RUN_FAILED')
      const held = await record('2026-10-02', failure.summary.runId)
      expect(held.tables.map((t) => [t.name, t.status, t.error?.code])).toEqual([
        ['users', 'failed', 'COLUMNS_REMOVED'],
        ['installed_software', 'succeeded', undefined],
      ])
      expect(held.tables[0]!.guards).toEqual([
        expect.objectContaining({ code: 'COLUMNS_REMOVED', action: 'held', columns: ['department'] }),
      ])
      expect(await s3.read('inventory/users/dt=2026-10-02/data.parquet')).toBeUndefined()
      const line = output.logs().find((l) => l.message === 'table export failed' && l.table === 'users')
      expect(line?.guards).toBe('COLUMNS_REMOVED held: 1 column removed since dt=2026-10-01: department ("Department")')
      const service = { service: 'guards-test' }
      expect(valuesOf(output.metrics(), 'GuardHeld', service)).toEqual([1])
      expect(valuesOf(output.metrics(), 'GuardHeld', { ...service, table: 'users' })).toEqual([1])
      expect(valuesOf(output.metrics(), 'GuardHeld', { ...service, table: 'installed_software' })).toEqual([0])
      expect(valuesOf(output.metrics(), 'RunsFailedBySource', service)).toEqual([1])

      const summary = await handler()(
        { tables: ['users'], exportDate: '2026-10-02', acceptChanges: true },
        lambdaContext(),
      )
      expect(summary).toMatchObject({ status: 'succeeded', tables: [{ name: 'users', status: 'succeeded' }] })
      const accepted = await record('2026-10-02', summary.runId)
      expect(accepted.tables[0]!.guards).toEqual([
        expect.objectContaining({ code: 'COLUMNS_REMOVED', action: 'accepted', columns: ['department'] }),
      ])
      expect(await s3.read('inventory/users/dt=2026-10-02/data.parquet')).toBeDefined()
      // The next day compares with what was accepted: nothing fires.
      emulator.upstream.setDate('2026-10-03')
      const next = await handler()({ tables: ['users'], exportDate: '2026-10-03' }, lambdaContext())
      expect((await record('2026-10-03', next.runId)).tables[0]!.guards).toBeUndefined()
    } finally {
      output.restore()
    }
  })

  it('rejects an acceptChanges that is not a boolean, naming the field', async () => {
    const failure = await handler()({ acceptChanges: 'yes' } as never, lambdaContext()).catch((e: Error) => e)
    expect(String((failure as Error).message)).toContain('acceptChanges: must be true or false')
  })
})
