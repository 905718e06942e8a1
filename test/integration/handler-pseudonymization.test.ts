import { createHmac, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { GetSecretValueCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { query } from '../support/duckdb.ts'
import { type CapturedOutput, captureOutput, lambdaContext } from '../support/emf.ts'
import { lambdaEnvironment, SECRET_ARN, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATE = '2026-03-01'
const KEY_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-pseudonymization-XyZ123'
/** The secret's value: random per test process, so finding it in any output means it leaked. */
const KEY = randomBytes(32).toString('hex')
const TABLES = [{ id: '1003', name: 'users', columns: { drop: ['display_name'], pseudonymize: ['e_mail'] } }]

let emulator: RunningEmulator
let s3: RunningS3
let output: CapturedOutput
const { client: secretsClient, mock: secrets } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient, reset: resetGlue } = emptyGlueCatalog()

/** Secrets Manager answering the key's secret with `value`, or with ResourceNotFoundException when null. */
const answerKey = (value: string | null = KEY) => {
  secrets.reset()
  secrets.on(GetSecretValueCommand).callsFake(async ({ SecretId }: { SecretId: string }) => {
    if (SecretId === SECRET_ARN) return { SecretString: DEMO_TOKEN }
    if (SecretId !== KEY_SECRET_ARN || value === null) {
      throw new ResourceNotFoundException({ message: "can't find the specified secret", $metadata: {} })
    }
    return { SecretString: value }
  })
}

const newHandler = (withKeySecret = true) =>
  createHandler({
    environment: {
      ...lambdaEnvironment({ source: { baseUrl: emulator.baseUrl }, tables: TABLES }),
      ...(withKeySecret ? { PSEUDONYMIZATION_SECRET_ARN: KEY_SECRET_ARN } : {}),
    },
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })

/** SQL over one object of the bucket (`FROM t`). */
const sql = async (key: string, select: string) => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'handler-pseudonymization-'))
  try {
    const file = path.join(folder, 'data.parquet')
    await writeFile(file, (await s3.read(key))!)
    return await query(select.replace('FROM t', `FROM read_parquet('${file}')`))
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { users: 40 } }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(() => {
  answerKey()
  resetGlue()
  output = captureOutput()
})
afterEach(() => output.restore())

describe('the Lambda handler with pseudonymized columns', () => {
  it('reads the key from its own secret once per cache age, by the exact request, and never logs it', async () => {
    const handler = newHandler()
    const summary = await handler({ exportDate: DATE }, lambdaContext())
    await handler({ exportDate: DATE }, lambdaContext())

    expect(summary.tables).toEqual([{ name: 'users', status: 'succeeded', rows: 40 }])
    const calls = secrets.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input)
    expect(calls).toEqual([{ SecretId: SECRET_ARN }, { SecretId: KEY_SECRET_ARN }])
    expect(output.text()).not.toContain(KEY)
    expect(output.text()).not.toContain(KEY.slice(0, 16))
  })

  it('lands the pseudonym of every e-mail as HMAC-SHA256 with the secret, without the dropped column', async () => {
    await newHandler()({ exportDate: DATE }, lambdaContext())
    const served = await (
      await fetch(`${emulator.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })
    ).text()
    const firstEmail = served.split('\n')[1]!.split(',')[2]!
    const expected = createHmac('sha256', KEY).update(firstEmail, 'utf8').digest('hex').slice(0, 32)
    const rows = await sql(
      `inventory/users/dt=${DATE}/data.parquet`,
      'SELECT * EXCLUDE (_export_run_id, _exported_at) FROM t ORDER BY _source_row_number LIMIT 1',
    )
    expect(rows[0]).toMatchObject({ e_mail: expected })
    expect(Object.keys(rows[0]!)).not.toContain('display_name')
    const parquet = (await s3.read(`inventory/users/dt=${DATE}/data.parquet`))!
    expect(parquet.includes(Buffer.from(firstEmail))).toBe(false)
  })

  it('fails before any table starts when the key secret cannot be read, naming the secret but no value', async () => {
    answerKey(null)
    emulator.requests.length = 0
    const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'PSEUDONYMIZATION_KEY_UNAVAILABLE' })
    expect((error as Error).message).toContain(KEY_SECRET_ARN)
    expect(emulator.requests.filter((r) => r.path.includes('/rest/tables/'))).toEqual([])
  })

  it('refuses a secret value shorter than 32 characters without quoting it', async () => {
    answerKey('short-key-value')
    const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'PSEUDONYMIZATION_KEY_UNAVAILABLE' })
    expect((error as Error).message).toMatch(/shorter than 32 characters/)
    expect((error as Error).message + output.text()).not.toContain('short-key-value')
  })

  it('refuses a key secret that holds the token before any request, so the key is never sent', async () => {
    answerKey(DEMO_TOKEN)
    emulator.requests.length = 0
    const error = await newHandler()({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toMatch(/the token secret: holds the pseudonymization key, not the API token/)
    expect(emulator.requests).toEqual([])
    expect((error as Error).message + output.text()).not.toContain(DEMO_TOKEN)
  })

  it('fails as a configuration error when the stack gave the function no key secret', async () => {
    const error = await newHandler(false)({ exportDate: DATE }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toMatch(/tables\[0\]\.columns\.pseudonymize: needs the pseudonymization key/)
  })
})
