/**
 * Publish order with the catalog: a catalog that refuses an update after the data is published leaves the date
 * wholly in place (data, registry, run index) with the outcome saying so, and the next run reconciles the catalog;
 * locally, one table the catalog cannot hold never breaks queries on the others.
 */

import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CreateTableCommand, InvalidInputException } from '@aws-sdk/client-glue'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { type CapturedOutput, captureOutput, lambdaContext } from '../support/emf.ts'
import { lambdaEnvironment, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATE = '2026-03-01'
let emulator: RunningEmulator
let s3: RunningS3
let output: CapturedOutput
const { client: secretsClient } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient, mock: glue, tables: glueTables, reset: resetGlue } = emptyGlueCatalog()

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 30, software: 30, users: 30 } }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(() => {
  resetGlue()
  output = captureOutput()
  return () => output.restore()
})

const invoke = (event: unknown) =>
  createHandler({
    environment: lambdaEnvironment({ source: { baseUrl: emulator.baseUrl } }),
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })(event as never, lambdaContext())

const json = async (key: string) => JSON.parse((await s3.read(`inventory/${key}`))!.toString())

describe('a catalog that refuses the update after the data is published (Lambda)', () => {
  it('leaves the new date in place with its registry and run index, says so, and is reconciled by the next run', async () => {
    glue
      .on(CreateTableCommand, { TableInput: { Name: 'users_latest' } })
      .rejects(new InvalidInputException({ message: 'view text too long', $metadata: {} }))

    const summary = await invoke({ tables: ['users'], exportDate: DATE })

    expect(summary.tables).toEqual([{ name: 'users', status: 'succeeded', rows: 30 }])
    expect(await s3.read(`inventory/users/dt=${DATE}/data.parquet`)).toBeDefined()
    expect(await json('_schemas/users.json')).toMatchObject({ lastExportDate: DATE })
    expect(await json('_runs/latest/users.json')).toMatchObject({
      status: 'succeeded',
      exportDate: DATE,
      lastSuccess: { exportDate: DATE },
    })
    const record = await json(summary.runRecord.replace('s3://warehouse/inventory/', ''))
    expect(record.tables[0].warnings).toEqual([
      expect.stringMatching(
        /^the catalog was not updated \(.*view text too long\); the date's data, registry and run index are in place, and the next run updates the catalog$/,
      ),
    ])
    expect([...glueTables.keys()]).not.toContain('inventory.users_latest')

    resetGlue()
    await invoke({ tables: ['users'], exportDate: DATE })
    expect([...glueTables.keys()]).toContain('inventory.users_latest')
  })
})

describe('the local warehouse with one table the catalog cannot hold', () => {
  it('still answers queries on the other tables, and names the table left out', async () => {
    const out = await tempDir('catalog-order-')
    const token = await tokenFile(DEMO_TOKEN)
    const exported = await runExportInProcess([
      ...['--base-url', emulator.baseUrl, '--token-file', token, '--out', out, '--date', DATE],
      ...['--table', '1001=devices', '--table', '1003=users'],
    ])
    expect(exported.exitCode).toBe(0)
    await writeFile(path.join(out, '_schemas/devices.json'), '{"version": 1, "columns": "oops"}')

    const result = await runCommandInProcess('query', ['--out', out, 'SELECT count(*) AS n FROM users_latest'])

    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('30')
    expect(result.stderr).toContain('warning: devices is left out of the catalog: [STATE_CORRUPT]')
  })
})
