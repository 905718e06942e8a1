/**
 * An erasure request and a rewrite on AWS, offline: a table with 30 export dates published by the handler into the harness's S3
 * (IAM decided with the synthesized exporter role), then the synthesized state machine's definition driven as Step
 * Functions runs it (state-machine.ts): the plan task with the input `npm run erase -- --aws-event` prints, then the
 * Map's batches, at most MaxConcurrency at once, then the finish, each invocation decided for the state machine's
 * role. The rows go from every date and nothing else changes; the value in clear is in no event, answer, log line or
 * object, and its digests are in the recorded request alone, which keeps them out of the next scheduled export
 * (counted in its run record) and which the function's role may not delete. Then a column retyped to string: every date is rewritten by the batches, the registry moves once, at the
 * finish, and the next export, refused before, is published.
 */
import { randomBytes } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { GlueClient } from '@aws-sdk/client-glue'
import { DeleteObjectCommand } from '@aws-sdk/client-s3'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import { synthesize } from '../infra/synth.ts'
import { runCommandInProcess, tempDir } from '../support/cli.ts'
import { type CapturedOutput, captureOutput, lambdaContext } from '../support/emf.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'
import { S3RVER_CREDENTIALS } from '../support/s3rver.ts'
import { type AwsHarness, startAwsHarness } from './harness.ts'
import { Authorizer } from './iam.ts'
import {
  functionEnvironment as deployedEnvironment,
  LOCAL_REGION,
  resolveIntrinsics,
  rolePolicies,
  type SynthesizedTemplate,
} from './role-policy.ts'
import { type Definition, runStateMachine } from './state-machine.ts'

const NAMES = {
  bucket: 'warehouse-history',
  secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf',
}
const KEY_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-key-XyZ123'
/** Random per test process, so finding it anywhere means it leaked. */
const KEY = randomBytes(32).toString('hex')
const DATES = Array.from({ length: 30 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')}`)
const DEVICE = '000007'
const MAX_CONCURRENCY = 3

const input = () => ({
  source: { baseUrl: 'https://inventory.example.com' },
  tables: [
    { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true },
    { id: '1003', name: 'users', key: ['user_id'] },
  ],
  export: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
  warehouse: { prefix: 'inventory' },
  deployment: {
    pseudonymizationSecret: { nameOrArn: KEY_SECRET_ARN },
    historyOperations: { enabled: true, maxConcurrency: MAX_CONCURRENCY },
  },
})

let emulator: RunningEmulator
let aws: AwsHarness
let template: SynthesizedTemplate
let runtimeConfig: unknown
let work: string
let output: CapturedOutput | undefined

const handlerFor = (environment: Record<string, string>) => {
  const clients = { region: LOCAL_REGION, endpoint: aws.json.endpoint, credentials: S3RVER_CREDENTIALS }
  return createHandler({
    environment,
    s3Client: aws.s3.client,
    secretsClient: new SecretsManagerClient(clients),
    glueClient: new GlueClient(clients),
    spoolDirectory: path.join(work, 'spool'),
  })
}

/** The history function's environment as the template sets it, its configuration inline instead of bundled. */
const functionEnvironment = (): Record<string, string> =>
  deployedEnvironment(template, NAMES, 'ExporterHistoryFunction', runtimeConfig)

const stateMachine = (): { definition: Definition; functionArn: string } => {
  const [, machine] = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine')!
  const text = resolveIntrinsics(machine.Properties?.DefinitionString, template, NAMES) as string
  const fnId = Object.keys(template.Resources).find(
    (id) => id.startsWith('ExporterHistoryFunction') && template.Resources[id]!.Type === 'AWS::Lambda::Function',
  )!
  const functionArn = resolveIntrinsics({ 'Fn::GetAtt': [fnId, 'Arn'] }, template, NAMES) as string
  return { definition: JSON.parse(text) as Definition, functionArn }
}

/**
 * Every version of every object under `prefix` of the bucket, with its bytes: the current ones, and the noncurrent
 * ones the bucket's versions model keeps (the test's own look, not a request the role sends).
 */
const versionsOf = async (prefix: string) => {
  const found: { key: string; body: Buffer }[] = []
  for (const key of await keys(prefix.slice('inventory/'.length))) {
    found.push({ key: `inventory/${key}`, body: (await aws.s3.read(`inventory/${key}`))! })
  }
  for (const [id, versions] of aws.s3.versions.noncurrent()) {
    const key = id.slice(NAMES.bucket.length + 1)
    if (!key.startsWith(prefix)) continue
    for (const version of versions) if (version.body) found.push({ key, body: version.body })
  }
  return found
}

/** Whether a raw body's key is of a date that held the value. */
const matched = (key: string) => matchedDates.includes(/dt=([^/]+)/.exec(key)![1]!)

/** The keys under `prefix` of the warehouse prefix, listed as the exporter role lists them. */
const keys = (prefix: string) => new S3WarehouseStore(aws.s3.client, NAMES.bucket, 'inventory').listKeys(prefix)

const devicesOf = async (date: string) =>
  readWithHyparquet((await aws.s3.read(`inventory/devices/dt=${date}/data.parquet`))!)

/** Each date's rows without the columns a rewrite renumbers, as comparable text. */
const snapshot = async (keep: (row: Record<string, unknown>) => boolean = () => true) => {
  const dates: Record<string, string[]> = {}
  for (const date of DATES) {
    dates[date] = (await devicesOf(date))
      .filter(keep)
      .map(({ _source_row_number, _row_fingerprint, ...row }) =>
        JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      )
      .sort()
  }
  return dates
}

let serial: string
let before: Record<string, string[]>
let matchedDates: string[]

beforeAll(async () => {
  work = await tempDir('history-fanout-')
  const synthesized = synthesize(input())
  template = synthesized.template.toJSON() as SynthesizedTemplate
  runtimeConfig = synthesized.stack.exporter.runtimeConfig
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 40, users: 10 } }) })
  aws = await startAwsHarness({
    template,
    names: NAMES,
    secretValue: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }),
    otherSecrets: [{ arn: KEY_SECRET_ARN, value: KEY }],
    versioned: true,
  })
  const handler = handlerFor(functionEnvironment())
  const quiet = captureOutput()
  try {
    for (const date of DATES) {
      emulator.upstream.setDate(date)
      const summary = await handler({ tables: ['devices', 'users'], exportDate: date }, lambdaContext())
      expect(summary.status).toBe('succeeded')
    }
  } finally {
    quiet.restore()
  }
  const rows = await devicesOf(DATES[0]!)
  serial = String(rows.find((r) => r.device_id === DEVICE)!.serial_number)
  before = await snapshot()
  matchedDates = DATES.filter((d) => before[d]!.some((row) => row.includes(`"serial_number":"${serial}"`)))
}, 300_000)

afterAll(async () => {
  output?.restore()
  await emulator?.close()
  await aws?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('an erasure request fanned out by the synthesized state machine, as IAM decides it', () => {
  it('removes the rows from all 30 dates in batches, and changes nothing else', async () => {
    expect(matchedDates.length).toBeGreaterThan(20)
    const config = path.join(work, 'config.json')
    const keyFile = path.join(work, 'key')
    await writeFile(config, JSON.stringify(input()))
    await writeFile(keyFile, KEY)
    const printed = await runCommandInProcess('erase', [
      ...['--config', config, '--table', 'devices'],
      ...['--where', `serial_number=${serial}`, '--where', `device_id=${DEVICE}`],
      ...['--aws-event', '--batch-size', '4', '--pseudonymization-key-file', keyFile],
    ])
    expect(printed.exitCode, printed.stderr).toBe(0)
    expect(printed.stdout).not.toContain(serial)
    const event = JSON.parse(printed.stdout) as { history: Record<string, unknown> }

    const { definition, functionArn } = stateMachine()
    const handler = handlerFor(functionEnvironment())
    output = captureOutput()
    const answers: unknown[] = []
    const { output: result, execution } = await runStateMachine(definition, event, {
      authorizer: new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES)),
      invoke: async (arn, payload) => {
        expect(arn).toBe(functionArn)
        const answer = await handler(payload as never, lambdaContext())
        answers.push(answer)
        return answer
      },
    })
    const logs = output.lines.join('\n')
    output.restore()
    output = undefined

    // One plan, then one invocation per batch of 4 dates, never more than MaxConcurrency at once.
    expect(execution.invocations.map((i) => i.state)).toEqual(['Plan', ...Array(8).fill('Batch'), 'Finish'])
    const lease = (result as { plan: { lease: string } }).plan.lease
    expect(execution.invocations.at(-1)!.payload).toEqual({ history: event.history, finish: true, lease })
    expect((result as { finish: unknown }).finish).toEqual({ operation: 'erase', table: 'devices', finished: true })
    expect(execution.peakConcurrency).toBeLessThanOrEqual(MAX_CONCURRENCY)
    expect(execution.peakConcurrency).toBeGreaterThan(1)
    const batches = (result as { batches: { rows: number; dates: number }[] }).batches
    expect(batches.reduce((sum, b) => sum + b.dates, 0)).toBe(30)
    expect(batches.reduce((sum, b) => sum + b.rows, 0)).toBe(matchedDates.length)

    // The rows are gone from every date; every other row is as it was, its lineage included.
    const kept = (row: Record<string, unknown>) => row.serial_number !== serial
    expect(await snapshot()).toEqual(
      Object.fromEntries(DATES.map((d) => [d, before[d]!.filter((r) => !r.includes(`"serial_number":"${serial}"`))])),
    )
    expect(Object.values(await snapshot(kept)).flat().length).toBe(Object.values(await snapshot()).flat().length)
    // The raw bodies of the dates that held the rows are deleted; the others are kept.
    const raw = await keys('_raw/devices/')
    expect(raw.map((k) => /dt=([^/]+)/.exec(k)![1]).sort()).toEqual(DATES.filter((d) => !matchedDates.includes(d)))

    // Each rewritten date's run record names the table, the columns and the count, never the value or a digest.
    const records: RunRecord[] = []
    for (const key of (await keys('_runs/')).filter((k) => k.startsWith('_runs/dt='))) {
      const record = JSON.parse((await aws.s3.read(`inventory/${key}`))!.toString()) as RunRecord
      if (record.mode === 'erase') records.push(record)
    }
    expect(records.map((r) => r.exportDate).sort()).toEqual(matchedDates)
    for (const record of records) {
      expect(record.tables[0]).toMatchObject({
        name: 'devices',
        erasure: { columns: ['serial_number', 'device_id'], rowsRemoved: 1 },
      })
    }
    const digests = (event.history.where as { digest: string }[]).map((c) => c.digest)
    // The plan recorded the request: the one object that holds its digests, never the value.
    const [request] = await keys('_erasures/devices/')
    expect(request).toMatch(/^_erasures\/devices\/[0-9a-f]{12}\.json$/)
    const written = new Map<string, Buffer>()
    for (const key of await keys('')) written.set(key, (await aws.s3.read(`inventory/${key}`))!)
    for (const needle of [serial, KEY, ...digests]) {
      const holding = [...written].filter(([, bytes]) => bytes.includes(Buffer.from(needle))).map(([key]) => key)
      expect(holding).toEqual(digests.includes(needle) ? [request] : [])
      expect(logs).not.toContain(needle)
      expect(JSON.stringify(answers)).not.toContain(needle)
    }
    // The inputs Step Functions keeps in its history hold digests only.
    expect(JSON.stringify(execution.invocations)).not.toContain(serial)
    // The bucket is versioned, as the stack's is: no version of the table's objects holds the value any more.
    for (const prefix of ['inventory/devices/', 'inventory/_raw/devices/']) {
      for (const version of await versionsOf(prefix)) {
        const rows = version.key.endsWith('.parquet') ? await readWithHyparquet(version.body) : []
        expect(
          rows.some((row) => row.serial_number === serial),
          version.key,
        ).toBe(false)
        expect(version.key.startsWith('inventory/_raw/') && matched(version.key)).toBe(false)
      }
    }
    expect(records.every((r) => (r.tables[0]!.versionsDeleted ?? 0) > 0)).toBe(true)
    expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
  }, 300_000)

  it('keeps the rows out of the next scheduled export from a service that still has them, and counts them', async () => {
    const next = '2026-10-31'
    emulator.upstream.setDate(next)
    const quiet = captureOutput()
    const summary = await handlerFor(functionEnvironment())(
      { tables: ['devices'], exportDate: next },
      lambdaContext(),
    ).finally(() => quiet.restore())
    expect(summary.status).toBe('succeeded')
    expect((await devicesOf(next)).some((r) => r.device_id === DEVICE)).toBe(false)
    const record = JSON.parse((await aws.s3.read(`inventory/${summary.runRecord.split('/inventory/')[1]}`))!.toString())
    expect(record.tables[0].erased).toEqual({ requests: [expect.stringMatching(/^[0-9a-f]{12}$/)], rows: 1 })
    // Its raw body held the device as received, so it is not kept; and the function may not forget a request.
    expect(await keys(`_raw/devices/dt=${next}/`)).toEqual([])
    const [request] = await keys('_erasures/devices/')
    await expect(
      aws.s3.client.send(new DeleteObjectCommand({ Bucket: NAMES.bucket, Key: `inventory/${request}` })),
    ).rejects.toThrow(/Access Denied|AccessDenied/)
  }, 300_000)

  it('is finished by a rerun of the same input, which changes nothing', async () => {
    const objects = await Promise.all(DATES.map((d) => aws.s3.read(`inventory/devices/dt=${d}/data.parquet`)))
    const handler = handlerFor(functionEnvironment())
    const { definition } = stateMachine()
    const config = path.join(work, 'config.json')
    const keyFile = path.join(work, 'key')
    const printed = await runCommandInProcess('erase', [
      ...['--config', config, '--table', 'devices', '--where', `serial_number=${serial}`, '--aws-event'],
      ...['--pseudonymization-key-file', keyFile],
    ])
    const quiet = captureOutput()
    const { output: result } = await runStateMachine(definition, JSON.parse(printed.stdout), {
      authorizer: new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES)),
      invoke: (_arn, payload) => handler(payload as never, lambdaContext()),
    }).finally(() => quiet.restore())
    expect((result as { batches: { rows: number }[] }).batches.every((b) => b.rows === 0)).toBe(true)
    expect(await Promise.all(DATES.map((d) => aws.s3.read(`inventory/devices/dt=${d}/data.parquet`)))).toEqual(objects)
  }, 300_000)

  it('refuses, as AWS does, what the roles may not do', async () => {
    // The exporter role deletes raw bodies of the archiving table only, and never a run record.
    for (const key of ['inventory/_raw/users/dt=2026-10-01/body.csv.gz', 'inventory/_runs/latest/devices.json']) {
      await expect(aws.s3.client.send(new DeleteObjectCommand({ Bucket: NAMES.bucket, Key: key }))).rejects.toThrow(
        /Access Denied|AccessDenied/,
      )
    }
    // The state machine's role invokes the export function and nothing else.
    const states = new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES))
    const other = 'arn:aws:lambda:us-east-1:123456789012:function:SomethingElse'
    expect((await states.decide({ action: 'lambda:InvokeFunction', resource: other })).allowed).toBe(false)
    expect(
      (await states.decide({ action: 's3:GetObject', resource: `arn:aws:s3:::${NAMES.bucket}/inventory/x` })).allowed,
    ).toBe(false)
  })
})

/** The state machine run on `event` by the function as deployed with `runtimeConfig`, quietly. */
const execute = async (event: unknown) => {
  const handler = handlerFor(functionEnvironment())
  const quiet = captureOutput()
  return runStateMachine(stateMachine().definition, event, {
    authorizer: new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES)),
    invoke: (_arn, payload) => handler(payload as never, lambdaContext()),
  }).finally(() => quiet.restore())
}

describe('a rewrite fanned out by the synthesized state machine, as IAM decides it', () => {
  it('retypes a column on all 30 dates in batches, moves the registry once at the finish, and the next export is published', async () => {
    // The refusals test before this one asked for denied deletes on purpose; this test's requests start here.
    const decided = aws.authorizer.decisions.length
    const retyped = structuredClone(runtimeConfig) as { tables: { name: string; columnTypes: object }[] }
    retyped.tables.find((t) => t.name === 'devices')!.columnTypes = { ram_gb: 'string' }
    runtimeConfig = retyped
    const next = '2026-10-31'
    emulator.upstream.setDate(next)
    const quiet = captureOutput()
    const refused = await handlerFor(functionEnvironment())({ tables: ['devices'], exportDate: next }, lambdaContext())
      .catch((error: unknown) => error)
      .finally(() => quiet.restore())
    expect(JSON.stringify(refused)).toContain('HISTORY_REWRITE_NEEDED')
    expect(typeof (await devicesOf(DATES[0]!))[0]!.ram_gb).toBe('bigint')

    const config = path.join(work, 'retyped.json')
    const changed = input()
    await writeFile(
      config,
      JSON.stringify({ ...changed, tables: [{ ...changed.tables[0], columnTypes: { ram_gb: 'string' } }] }),
    )
    const printed = await runCommandInProcess('rewrite', [
      ...['--config', config, '--table', 'devices', '--aws-event', '--batch-size', '4'],
      ...['--pseudonymization-key-file', path.join(work, 'key')],
    ])
    expect(printed.exitCode, printed.stderr).toBe(0)
    const event = JSON.parse(printed.stdout) as { history: Record<string, unknown> }
    expect(event.history).toEqual({
      operation: 'rewrite',
      table: 'devices',
      keyCheck: expect.any(String),
      batchSize: 4,
    })

    const registry = `arn:aws:s3:::${NAMES.bucket}/inventory/_schemas/devices.json`
    const writesBefore = aws.authorizer.decisions.length
    const { output: result, execution } = await execute(event)
    expect(execution.invocations.map((i) => i.state)).toEqual(['Plan', ...Array(8).fill('Batch'), 'Finish'])
    expect((result as { finish: unknown }).finish).toEqual({ operation: 'rewrite', table: 'devices', finished: true })
    const writes = aws.authorizer.decisions
      .slice(writesBefore)
      .filter((d) => d.action === 's3:PutObject' && d.resource === registry)
    expect(writes).toHaveLength(1)
    for (const date of DATES) {
      const rows = await devicesOf(date)
      expect(rows.every((r) => r.ram_gb === null || typeof r.ram_gb === 'string')).toBe(true)
    }

    const again = captureOutput()
    const published = await handlerFor(functionEnvironment())(
      { tables: ['devices'], exportDate: next },
      lambdaContext(),
    ).finally(() => again.restore())
    expect(published.status).toBe('succeeded')
    expect(typeof (await devicesOf(next)).find((r) => r.ram_gb !== null)!.ram_gb).toBe('string')
    expect(aws.authorizer.decisions.slice(decided).filter((d) => !d.allowed)).toEqual([])
  }, 300_000)
})
