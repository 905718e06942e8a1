import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CreateTableCommand } from '@aws-sdk/client-glue'
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { METRICS_NAMESPACE } from '../../functions/export/core/constants.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { query } from '../support/duckdb.ts'
import { type CapturedOutput, captureOutput, lambdaContext, valuesOf } from '../support/emf.ts'
import {
  lambdaEnvironment,
  SECRET_ARN,
  SERVICE_NAME as SERVICE,
  DEMO_TABLE_CONFIG as TABLES,
  tokenSecretStandIn,
} from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATE = '2026-03-01'
const ROWS = { devices: 300, software: 500, users: 80 }

let emulator: RunningEmulator
let s3: RunningS3
let output: CapturedOutput
const { client: secretsClient, mock: secrets, answer: answerSecret } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient, mock: glue, reset: resetGlue } = emptyGlueCatalog()

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: ROWS }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(() => {
  secrets.reset()
  answerSecret()
  resetGlue()
  emulator.faults.clear()
  output = captureOutput()
})
afterEach(() => output.restore())

const environment = (
  source: Record<string, unknown> = { baseUrl: emulator.baseUrl },
  tables: readonly Record<string, unknown>[] = TABLES,
) => lambdaEnvironment({ source, tables })

const newHandler = (source?: Record<string, unknown>) =>
  createHandler({ environment: environment(source), s3Client: s3.client, secretsClient, glueClient })

/** Downloads an object and runs SQL over it with DuckDB (`FROM t`). */
const sql = async (key: string, select: string) => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'handler-parquet-'))
  try {
    const file = path.join(folder, 'data.parquet')
    await writeFile(file, (await s3.read(key))!)
    return await query(select.replace('FROM t', `FROM read_parquet('${file}')`))
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

describe('the Lambda handler', () => {
  it('exports every configured table to <prefix>/<name>/dt=<date>/data.parquet and returns a summary', async () => {
    const summary = await newHandler()({ exportDate: DATE }, lambdaContext())

    expect(summary).toMatchObject({
      exportDate: DATE,
      status: 'succeeded',
      runRecord: `s3://warehouse/inventory/_runs/dt=${DATE}/${summary.runId}.json`,
      tables: [
        { name: 'devices', status: 'succeeded', rows: ROWS.devices },
        { name: 'installed_software', status: 'succeeded', rows: ROWS.software },
        { name: 'users', status: 'succeeded', rows: ROWS.users },
      ],
    })
    const devices = await sql(
      `inventory/devices/dt=${DATE}/data.parquet`,
      'SELECT count(*) AS n, typeof(any_value(ram_gb)) AS ram, typeof(any_value(purchase_date)) AS bought, ' +
        'typeof(any_value(virtual)) AS virt, min(_export_run_id) AS run FROM t',
    )
    expect(devices).toEqual([
      { n: String(ROWS.devices), ram: 'BIGINT', bought: 'DATE', virt: 'BOOLEAN', run: summary.runId },
    ])
    const users = await sql(`inventory/users/dt=${DATE}/data.parquet`, 'SELECT count(*) AS n FROM t')
    expect(users).toEqual([{ n: String(ROWS.users) }])
    const record = JSON.parse((await s3.read(`inventory/_runs/dt=${DATE}/${summary.runId}.json`))!.toString())
    expect(record).toMatchObject({ runId: summary.runId, status: 'succeeded', tokenOwner: 'api-export' })
    expect(await s3.pendingUploads()).toEqual([])
    const created = glue.commandCalls(CreateTableCommand).map((call) => call.args[0].input)
    expect(created.map((input) => input.TableInput?.Name).sort()).toEqual(
      ['devices', 'devices_latest', 'installed_software', 'installed_software_latest', 'users', 'users_latest'].sort(),
    )
    expect(created.find((input) => input.TableInput?.Name === 'devices')).toMatchObject({
      DatabaseName: 'inventory',
      TableInput: { StorageDescriptor: { Location: 's3://warehouse/inventory/devices/' } },
    })
  })

  it('emits per-run and per-table metrics in EMF and JSON logs keyed by run and table, never the token', async () => {
    const summary = await newHandler()({ exportDate: DATE }, lambdaContext())
    const data = output.metrics()
    const service = { service: SERVICE }

    expect(new Set(data.map((d) => d.namespace))).toEqual(new Set([METRICS_NAMESPACE]))
    expect(valuesOf(data, 'Runs', service)).toEqual([1])
    expect(valuesOf(data, 'SuccessfulRuns', service)).toEqual([1])
    expect(valuesOf(data, 'RunsWithAuthFailures', service)).toEqual([0])
    expect(valuesOf(data, 'RunsWithServerFailures', service)).toEqual([0])
    expect(valuesOf(data, 'TablesSucceeded', service)).toEqual([3])
    expect(valuesOf(data, 'TablesFailed', service)).toEqual([0])
    expect(valuesOf(data, 'Retries', service)).toEqual([0])
    expect(valuesOf(data, 'RunDuration', service)[0]).toBeGreaterThan(0)
    expect(valuesOf(data, 'Rows', { ...service, table: 'devices' })).toEqual([ROWS.devices])
    expect(valuesOf(data, 'Rows', { ...service, table: 'installed_software' })).toEqual([ROWS.software])
    expect(valuesOf(data, 'BytesReceived', { ...service, table: 'users' })[0]).toBeGreaterThan(1000)
    expect(valuesOf(data, 'BytesWritten', { ...service, table: 'users' })[0]).toBeGreaterThan(1000)
    expect(valuesOf(data, 'TableDuration', { ...service, table: 'users' })).toHaveLength(1)
    expect(data.filter((d) => d.name === 'TableFailures')).toEqual([])

    const exported = output.logs().filter((log) => log.message === 'table exported')
    expect(exported.map((log) => [log.runId, log.table, log.service])).toEqual(
      expect.arrayContaining([[summary.runId, 'devices', SERVICE]]),
    )
    expect(exported[0]).toMatchObject({ function_request_id: lambdaContext().awsRequestId, level: 'INFO' })
    expect(output.text()).not.toContain(DEMO_TOKEN)
  })

  it('reads the secret by TOKEN_SECRET_ARN once for two invocations within the cache age', async () => {
    const handler = newHandler()
    await handler({ tables: ['users'], exportDate: DATE }, lambdaContext())
    await handler({ tables: ['users'], exportDate: DATE }, lambdaContext())

    const calls = secrets.commandCalls(GetSecretValueCommand)
    expect(calls).toHaveLength(1)
    expect(calls[0]!.args[0].input).toEqual({ SecretId: SECRET_ARN })
  })

  it('takes the base URL from a JSON secret over the configured one', async () => {
    secrets
      .on(GetSecretValueCommand, { SecretId: SECRET_ARN })
      .resolves({ SecretString: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }) })
    const handler = newHandler({ baseUrl: 'https://inventory.invalid' })

    const summary = await handler({ tables: ['users'], exportDate: DATE }, lambdaContext())

    expect(summary.tables).toEqual([{ name: 'users', status: 'succeeded', rows: ROWS.users }])
  })

  it('warns once per run that plain http carries the token, when source.allowInsecureHttp allows it', async () => {
    await newHandler({ baseUrl: emulator.baseUrl, allowInsecureHttp: true })(
      { tables: ['users'], exportDate: DATE },
      lambdaContext(),
    )
    const warnings = output.logs().filter((log) => /plain http/.test(String(log.message)))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ level: 'WARN' })
    expect(warnings[0]!.message).toContain('the token crosses the network unencrypted')
  })

  it('narrows the run to the tables named in the detail of an EventBridge Scheduled Event', async () => {
    const event = {
      version: '0',
      id: 'e2f6c3d4-1111-4222-8333-944455556666',
      'detail-type': 'Scheduled Event' as const,
      source: 'aws.events',
      account: '123456789012',
      time: `${DATE}T02:00:00Z`,
      region: 'us-east-1',
      resources: ['arn:aws:events:us-east-1:123456789012:rule/inventory-export'],
      detail: { tables: ['1003'], exportDate: DATE },
    }
    const summary = await newHandler()(event, lambdaContext())
    expect(summary.tables.map((t) => t.name)).toEqual(['users'])
  })

  it.each([
    [{ tables: ['nope'] }, 'tables[0]: "nope" is not a configured table'],
    [{ tables: 'users' }, 'tables: must be a list of table ids or names'],
    [{ exportDate: '2026-02-30' }, 'exportDate: must be a calendar date as YYYY-MM-DD'],
    [{ exportDate: 20261124 }, 'exportDate: must be a date as YYYY-MM-DD'],
    [{ exportDate: '1999-12-31' }, 'exportDate: must be between 2000-01-01 and '],
    [{ exportDate: '2206-11-24' }, 'exportDate: must be between 2000-01-01 and '],
    [{ reprocess: true }, 'exportDate: is required with reprocess'],
    [{ reprocess: 'yes', exportDate: DATE }, 'reprocess: must be true or false'],
    [{ reprocesss: true, exportDate: DATE }, 'reprocesss: is not a known key; did you mean "reprocess"?'],
  ])('rejects the event %j with a ConfigError naming the field', async (event, message) => {
    const error = await newHandler()(event as never, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toContain(message)
  })
})

describe('the Lambda handler given a reprocess event', () => {
  const REPROCESS_DATE = '2026-03-02'
  const archiving = () =>
    createHandler({
      environment: environment(undefined, [{ id: '1001', name: 'devices', archiveRaw: true }, TABLES[2]!]),
      s3Client: s3.client,
      secretsClient,
      glueClient,
    })
  /** Every data column and the lineage that does not name the run: equal for equal rows of equal types. */
  const devicesOn = (date: string) =>
    sql(
      `inventory/devices/dt=${date}/data.parquet`,
      'SELECT * EXCLUDE (_export_run_id, _exported_at) FROM t ORDER BY _source_row_number',
    )
  const runRecord = async (runId: string, date: string) =>
    JSON.parse((await s3.read(`inventory/_runs/dt=${date}/${runId}.json`))!.toString())

  it('rebuilds the date from the raw archive in S3 without the service or the token, as npm run reprocess does', async () => {
    const handler = archiving()
    const exported = await handler({ exportDate: REPROCESS_DATE }, lambdaContext())
    expect(await s3.read(`inventory/_raw/devices/dt=${REPROCESS_DATE}/body.csv.gz`)).toBeDefined()
    const before = await devicesOn(REPROCESS_DATE)
    const requests = emulator.requests.length
    secrets.reset()

    const summary = await handler({ reprocess: true, exportDate: REPROCESS_DATE, tables: ['devices'] }, lambdaContext())

    expect(summary).toMatchObject({
      exportDate: REPROCESS_DATE,
      status: 'succeeded',
      tables: [{ name: 'devices', status: 'succeeded', rows: ROWS.devices }],
    })
    expect(emulator.requests.length).toBe(requests)
    expect(secrets.commandCalls(GetSecretValueCommand)).toEqual([])
    expect(await devicesOn(REPROCESS_DATE)).toEqual(before)
    const runIds = await sql(
      `inventory/devices/dt=${REPROCESS_DATE}/data.parquet`,
      'SELECT DISTINCT _export_run_id AS run FROM t',
    )
    expect(runIds).toEqual([{ run: summary.runId }])
    expect(await s3.pendingUploads()).toEqual([])

    const record = await runRecord(summary.runId, REPROCESS_DATE)
    expect(record).toMatchObject({
      mode: 'reprocess',
      status: 'succeeded',
      tables: [{ name: 'devices', rows: ROWS.devices }],
    })
    expect(record.tokenOwner).toBeUndefined()
    expect(record.tables[0]).not.toHaveProperty('httpStatus')
    expect(record.tables[0]).not.toHaveProperty('attempts')
    expect(await runRecord(exported.runId, REPROCESS_DATE)).toMatchObject({
      mode: 'export',
      tables: [
        { name: 'devices', httpStatus: 200, attempts: 1 },
        { name: 'users', httpStatus: 200, attempts: 1 },
      ],
    })
  })

  it('fails a table without an archive for the date with RAW_ARCHIVE_MISSING, keeping its data', async () => {
    const handler = archiving()
    await handler({ exportDate: REPROCESS_DATE, tables: ['users'] }, lambdaContext())
    const before = await s3.read(`inventory/users/dt=${REPROCESS_DATE}/data.parquet`)

    const error = await handler(
      { reprocess: true, exportDate: REPROCESS_DATE, tables: ['users'] },
      lambdaContext(),
    ).catch((e: unknown) => e)

    expect(error).toMatchObject({
      code: 'RUN_FAILED',
      summary: { tables: [{ name: 'users', error: { code: 'RAW_ARCHIVE_MISSING' } }] },
    })
    expect(await s3.read(`inventory/users/dt=${REPROCESS_DATE}/data.parquet`)).toEqual(before)
  })
})

describe('the Lambda environment', () => {
  it.each([
    ['EXPORT_CONFIG is missing', { EXPORT_CONFIG: undefined }, '  - EXPORT_CONFIG: is not set'],
    ['EXPORT_CONFIG is not JSON', { EXPORT_CONFIG: '{source:' }, '  - EXPORT_CONFIG: is not valid JSON'],
    [
      'EXPORT_CONFIG has no table',
      { EXPORT_CONFIG: '{"source":{"baseUrl":"https://x.example.com"},"tables":[]}' },
      '  - EXPORT_CONFIG.tables: must list at least one table',
    ],
    [
      'WAREHOUSE_BUCKET is not a bucket name',
      { WAREHOUSE_BUCKET: 'Not_A_Bucket' },
      '  - WAREHOUSE_BUCKET: "Not_A_Bucket" is not an S3 bucket name',
    ],
    ['TOKEN_SECRET_ARN is empty', { TOKEN_SECRET_ARN: ' ' }, '  - TOKEN_SECRET_ARN: is not set'],
    [
      'source.caCertificatesFile cannot be read',
      {
        EXPORT_CONFIG: JSON.stringify({
          source: { baseUrl: 'https://inventory.example.com', caCertificatesFile: 'no/such/ca.pem' },
          tables: TABLES,
        }),
      },
      '  - source.caCertificatesFile: cannot be read (ENOENT: no/such/ca.pem)',
    ],
  ])('fails with a ConfigError naming the variable when %s', async (_, change, line) => {
    const handler = createHandler({
      environment: { ...environment(), ...change },
      s3Client: s3.client,
      secretsClient,
      glueClient,
    })
    const error = await handler({}, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', failureClass: 'config' })
    expect((error as Error).message).toContain('invalid Lambda environment:\n')
    expect((error as Error).message).toContain(line)
    expect(secrets.commandCalls(GetSecretValueCommand)).toEqual([])
  })
})
