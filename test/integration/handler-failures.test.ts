import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { GetSecretValueCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_USERS, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { ErrorCode } from '../../functions/export/core/errors.ts'
import { createHandler, RunFailedError } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { type CapturedOutput, captureOutput, lambdaContext, valuesOf } from '../support/emf.ts'
import { lambdaEnvironment, SECRET_ARN, SERVICE_NAME as SERVICE, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const SERVICE_ONLY = { service: SERVICE }
const DATE = '2026-04-01'
/** A token only the tests know: if it shows up in anything captured, it leaked. */
const CANARY = 'canary-token-7d1f0b5e9a2c4e68'

let emulator: RunningEmulator
let s3: RunningS3
let output: CapturedOutput
const { client: secretsClient, mock: secrets, answer: answerSecret } = tokenSecretStandIn(CANARY)
const { client: glueClient } = emptyGlueCatalog()

/** The stand-in with one user whose token is the canary. */
const startEmulator = () =>
  startInventoryEmulator({
    tables: demoTables({ rows: { devices: 200, software: 300, users: 50 } }),
    users: [{ ...DEMO_USERS[0]!, token: CANARY }],
  })

beforeAll(async () => {
  emulator = await startEmulator()
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(() => {
  secrets.reset()
  answerSecret()
  emulator.faults.clear()
  output = captureOutput()
})
afterEach(async () => {
  output.restore()
  // Everything the run emitted or wrote: the token never appears in any of it.
  expect(output.text()).not.toContain(CANARY)
  const listing = await s3.client.send(new ListObjectsV2Command({ Bucket: 'warehouse' }))
  for (const { Key } of listing.Contents ?? []) expect((await s3.read(Key!))?.includes(CANARY)).toBe(false)
})

const newHandler = (exportTuning: Record<string, unknown> = {}) =>
  createHandler({
    environment: lambdaEnvironment({ source: { baseUrl: emulator.baseUrl }, exportTuning }),
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })

describe('the Lambda handler when things fail', () => {
  it('fails the invocation naming a table that keeps answering 500, and still publishes the others', async () => {
    emulator.faults.always('1002', { kind: 'status', status: 500 })

    const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)

    expect(error).toBeInstanceOf(RunFailedError)
    expect((error as Error).message).toMatch(
      /^export run \S+ \(dt=2026-04-01\): 1 of 3 tables failed: installed_software \[SERVER_ERROR HTTP 500\]\. The other tables were published; details in s3:\/\/warehouse\/inventory\/_runs\/dt=2026-04-01\/\S+\.json$/,
    )
    expect(await s3.read(`inventory/devices/dt=${DATE}/data.parquet`)).toBeDefined()
    expect(await s3.read(`inventory/users/dt=${DATE}/data.parquet`)).toBeDefined()
    expect(await s3.read(`inventory/installed_software/dt=${DATE}/data.parquet`)).toBeUndefined()
    const record = JSON.parse(
      (await s3.read((error as RunFailedError).summary.runRecord.replace('s3://warehouse/', '')))!.toString(),
    )
    expect(record.status).toBe('failed')

    const data = output.metrics()
    expect(valuesOf(data, 'SuccessfulRuns', SERVICE_ONLY)).toEqual([0])
    expect(valuesOf(data, 'RunsWithServerFailures', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(data, 'RunsWithAuthFailures', SERVICE_ONLY)).toEqual([0])
    expect(valuesOf(data, 'TablesFailed', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(data, 'TablesSucceeded', SERVICE_ONLY)).toEqual([2])
    expect(valuesOf(data, 'Retries', SERVICE_ONLY)).toEqual([3])
    expect(valuesOf(data, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'server' })).toEqual([1])
  })

  it('fails every table after one request to /rest/usermanager/me when the token was revoked', async () => {
    emulator.revokeToken(CANARY)
    const before = emulator.requests.length
    try {
      const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)

      expect(emulator.requests.slice(before).map((r) => [r.path, r.status])).toEqual([['/rest/usermanager/me', 401]])
      expect((error as Error).message).toContain(
        '3 of 3 tables failed: devices [AUTH_REJECTED HTTP 401], installed_software [AUTH_REJECTED HTTP 401], users [AUTH_REJECTED HTTP 401]',
      )
      const data = output.metrics()
      expect(valuesOf(data, 'RunsWithAuthFailures', SERVICE_ONLY)).toEqual([1])
      expect(valuesOf(data, 'RunsWithServerFailures', SERVICE_ONLY)).toEqual([0])
      expect(valuesOf(data, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'auth' })).toEqual([1, 1, 1])
    } finally {
      // The emulator cannot un-revoke: give the remaining tests a fresh one.
      await emulator.close()
      emulator = await startEmulator()
    }
  })

  it('fails with TOKEN_UNAVAILABLE and the put-secret-value hint when the secret has no value yet', async () => {
    secrets.on(GetSecretValueCommand).rejects(
      new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
        $metadata: {},
      }),
    )

    const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)

    expect(error).toMatchObject({ code: ErrorCode.TOKEN_UNAVAILABLE, failureClass: 'config' })
    expect((error as Error).message).toBe(
      `the API token could not be read from secret ${SECRET_ARN}: it does not exist or has no value yet`,
    )
    expect((error as { hint: string }).hint).toContain('aws secretsmanager put-secret-value')
    expect(valuesOf(output.metrics(), 'Runs', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(output.metrics(), 'SuccessfulRuns', SERVICE_ONLY)).toEqual([0])
  })

  it.each([
    ['an empty string', '  \n', 'it is empty'],
    ['JSON without a token', '{"baseUrl":"https://inventory.example.com"}', 'its JSON has no non-empty "token" string'],
    ['broken JSON', `{"token": "${CANARY}"`, 'it starts with "{" but is not valid JSON'],
  ])('refuses a secret that is %s, without quoting it', async (_, value, reason) => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: value })
    const error = await newHandler()({}, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: ErrorCode.TOKEN_UNAVAILABLE })
    expect((error as Error).message).toContain(reason)
    expect(JSON.stringify(error)).not.toContain(CANARY)
  })

  it('refuses a baseUrl in the secret that embeds credentials, naming the field', async () => {
    secrets.on(GetSecretValueCommand).resolves({
      SecretString: JSON.stringify({ token: CANARY, baseUrl: 'https://user:pw@inventory.example.com' }),
    })
    const error = await newHandler()({}, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: ErrorCode.CONFIG_INVALID })
    expect((error as Error).message).toContain('baseUrl: must not embed credentials')
  })

  it('stops a table still in flight at the deadline, keeps its previous data, and records the run', async () => {
    const first = await newHandler()({ exportDate: DATE, tables: ['installed_software'] }, lambdaContext())
    const previous = await s3.read(`inventory/installed_software/dt=${DATE}/data.parquet`)
    expect(first.status).toBe('succeeded')
    output.clear()
    // 5 s margin: tables start while 5 s remain; in-flight work is stopped when 2.5 s remain (at 5.5 s here).
    emulator.faults.script('1002', [{ kind: 'delay', ms: 7_000 }])

    const error = await newHandler({ deadlineMarginSeconds: 5 })({ exportDate: DATE }, lambdaContext(8_000)).catch(
      (e: unknown) => e,
    )

    const summary = (error as RunFailedError).summary
    expect(summary.tables.map((t) => [t.name, t.status, t.error?.code])).toEqual([
      ['devices', 'succeeded', undefined],
      ['installed_software', 'failed', ErrorCode.DEADLINE_EXCEEDED],
      ['users', 'succeeded', undefined],
    ])
    expect(await s3.read(`inventory/installed_software/dt=${DATE}/data.parquet`)).toEqual(previous)
    expect(await s3.pendingUploads()).toEqual([])
    expect(await s3.read(summary.runRecord.replace('s3://warehouse/', ''))).toBeDefined()
    expect(valuesOf(output.metrics(), 'TableFailures', { ...SERVICE_ONLY, failureClass: 'deadline' })).toEqual([1])
    expect(output.logs().map((log) => log.message)).toContain(
      'the time limit is near: stopping downloads and uploads in flight',
    )
    expect(valuesOf(output.metrics(), 'Runs', SERVICE_ONLY)).toEqual([1])
  }, 20_000)
})
