/**
 * The history events at the handler (lambda/history.ts): a batch made by `eraseEvent` matches a pseudonymized
 * column by its stored pseudonym and a plain one by the digests of its texts, as the clear value would; a batch
 * starts no date it has no time for and says which dates are left; a function without the key, or an event made
 * with another key, is refused before anything changes; the event never carries the value in clear. A rewrite's
 * finish moves the registry only once every date is in line, and rewrites nothing itself.
 */
import { randomBytes } from 'node:crypto'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { PseudonymizationKey } from '../../functions/export/core/pseudonymization-key.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { eraseEvent, rewriteEvent } from '../../functions/export/lambda/history-event.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { type CapturedOutput, captureOutput, lambdaContext } from '../support/emf.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'
import { lambdaEnvironment, SECRET_ARN, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATES = ['2026-03-01', '2026-03-02', '2026-03-03']
const KEY_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-pseudonymization-XyZ123'
const KEY = randomBytes(32).toString('hex')
const TABLES = [
  { id: '1001', name: 'devices', key: ['device_id'] },
  { id: '1003', name: 'users', key: ['user_id'], columns: { pseudonymize: ['e_mail'] } },
]

let emulator: RunningEmulator
let s3: RunningS3
let output: CapturedOutput
const { client: secretsClient, mock: secrets } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient } = emptyGlueCatalog()

const newHandler = (withKeySecret = true, tables: readonly Record<string, unknown>[] = TABLES) =>
  createHandler({
    environment: {
      ...lambdaEnvironment({ source: { baseUrl: emulator.baseUrl }, tables }),
      ...(withKeySecret ? { PSEUDONYMIZATION_SECRET_ARN: KEY_SECRET_ARN } : {}),
    },
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })

const rowsOf = async (table: string, date: string) =>
  readWithHyparquet((await s3.read(`inventory/${table}/dt=${date}/data.parquet`))!)

/** The keys of every erasure's run record in the bucket. */
const eraseRecords = async (): Promise<string[]> => {
  const listing = await s3.client.send(new ListObjectsV2Command({ Bucket: 'warehouse', Prefix: 'inventory/_runs/dt=' }))
  const keys = (listing.Contents ?? []).map((o) => o.Key!)
  const erase = await Promise.all(keys.map(async (key) => JSON.parse(String(await s3.read(key))).mode === 'erase'))
  return keys.filter((_key, i) => erase[i])
}

/** A context whose clock moves `stepMs` on every reading, from `startMs`: the time a date takes, without waiting. */
const steppingContext = (startMs: number, stepMs: number) => {
  let readings = 0
  return { ...lambdaContext(), getRemainingTimeInMillis: () => startMs - stepMs * readings++ }
}

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 30, users: 20 } }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(async () => {
  secrets.reset()
  secrets.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({ SecretString: DEMO_TOKEN })
  secrets.on(GetSecretValueCommand, { SecretId: KEY_SECRET_ARN }).resolves({ SecretString: KEY })
  output = captureOutput()
  for (const date of DATES) {
    emulator.upstream.setDate(date)
    await newHandler()({ exportDate: date }, lambdaContext())
  }
})
afterEach(() => output.restore())

describe('history events at the handler', () => {
  it('plans the dates in batches and erases a pseudonymized column by the digest the event carries', async () => {
    const [row] = await rowsOf('users', DATES[0]!)
    const served = await (
      await fetch(`${emulator.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })
    ).text()
    // The clear address of the first user, whose pseudonym the first row holds.
    const key = PseudonymizationKey.fromText(KEY, 'test')
    const digestOf = (value: string) =>
      eraseEvent(key, 'users', [{ column: 'e_mail', value }]).history.where![0]!.digest
    const clear = served
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[2]!)
      .find((email) => digestOf(email) === row!.e_mail)!
    expect(clear).toBeDefined()
    const event = eraseEvent(key, 'users', [{ column: 'e_mail', value: clear }], 2)
    expect(JSON.stringify(event)).not.toContain(clear)

    const handler = newHandler()
    const plan = (await handler(event, lambdaContext())) as unknown as { batches: string[][]; lease: string }
    expect(plan).toEqual({
      operation: 'erase',
      table: 'users',
      dates: 3,
      batches: [DATES.slice(0, 2), DATES.slice(2)],
      lease: expect.stringMatching(/^erase-[0-9a-f]{16}$/),
    })
    // The plan's lease holds the table for the request: the batches share it, and the finish gives it up.
    const blocked = await newHandler()({ tables: ['users'], exportDate: DATES[2]! }, steppingContext(61_000, 0))
      .then(() => undefined)
      .catch((error: unknown) => error)
    expect(JSON.stringify(blocked)).toContain('TABLE_BUSY')
    for (const dates of plan.batches) await handler({ ...event, dates, lease: plan.lease }, lambdaContext())
    await handler({ ...event, finish: true, lease: plan.lease }, lambdaContext())
    for (const date of DATES) {
      const rows = await rowsOf('users', date)
      expect(rows.filter((r) => r.e_mail === row!.e_mail)).toEqual([])
      expect(rows.length).toBeGreaterThan(0)
    }
    expect(output.text()).not.toContain(clear)
  })

  it("erases a plain column by the digest of its stored text, on the batch's dates only", async () => {
    const key = PseudonymizationKey.fromText(KEY, 'test')
    const before = await rowsOf('devices', DATES[1]!)
    const target = before.find((r) => r.device_id === '000004')!
    const event = eraseEvent(key, 'devices', [{ column: 'device_id', value: '000004' }])
    const answer = await newHandler()({ ...event, dates: [DATES[1]!] }, lambdaContext())
    expect(answer).toEqual({
      operation: 'erase',
      table: 'devices',
      rows: 1,
      dates: [{ exportDate: DATES[1], rows: 1 }],
    })
    const after = await rowsOf('devices', DATES[1]!)
    expect(after).toHaveLength(before.length - 1)
    expect(after.some((r) => r.device_id === target.device_id)).toBe(false)
    expect((await rowsOf('devices', DATES[0]!)).some((r) => r.device_id === '000004')).toBe(true)
  })

  it('matches a typed column by the digest of the spelling it stores, from the value as the service spells it', async () => {
    const key = PseudonymizationKey.fromText(KEY, 'test')
    const before = await rowsOf('devices', DATES[1]!)
    // Not 000004: the test before recorded its erasure, which every export since leaves out.
    const target = before.find((r) => r.device_id === '000006')!
    // The instant as the service writes it, without milliseconds; the column stores 2026-…T…:…:….000Z.
    const served = (target.last_seen as Date).toISOString().replace('.000Z', 'Z')
    expect(served).not.toBe((target.last_seen as Date).toISOString())
    const event = eraseEvent(key, 'devices', [{ column: 'last_seen', value: served }])
    expect(event.history.where![0]!.typed).toHaveProperty('timestamp')
    const answer = await newHandler()({ ...event, dates: [DATES[1]!] }, lambdaContext())
    expect((answer as unknown as { rows: number }).rows).toBe(
      before.filter((r) => (r.last_seen as Date | null)?.getTime() === (target.last_seen as Date).getTime()).length,
    )
    expect((await rowsOf('devices', DATES[1]!)).some((r) => r.device_id === '000006')).toBe(false)
  })

  it('starts no date it has no time for, names the dates left, and a rerun finishes them', async () => {
    const event = eraseEvent(PseudonymizationKey.fromText(KEY, 'test'), 'devices', [
      { column: 'device_id', value: '000002' },
    ])
    const batch = { ...event, dates: DATES }
    const recordsBefore = await eraseRecords()
    // Each date seems to take 1 s: after the first, 60.5 s are left, less than the 60 s margin and one date.
    const error = await newHandler()(batch, steppingContext(63_500, 1_000)).catch((e: unknown) => e)
    expect(error).toMatchObject({
      name: 'HistoryBatchIncompleteError',
      code: 'HISTORY_BATCH_INCOMPLETE',
      retryable: true,
    })
    expect((error as Error).message).toBe(
      `table 1001: 1 of 3 dates of the batch done before the function's time limit; 2 left (dt=${DATES[1]} to dt=${DATES[2]})`,
    )
    expect((await rowsOf('devices', DATES[0]!)).some((r) => r.device_id === '000002')).toBe(false)
    expect((await rowsOf('devices', DATES[2]!)).some((r) => r.device_id === '000002')).toBe(true)
    const rerun = await newHandler()(batch, lambdaContext())
    expect((rerun as unknown as { dates: { rows: number }[] }).dates.map((d) => d.rows)).toEqual([0, 1, 1])
    // A batch retried once more skips every date: one run record per date that held the row, never two.
    await newHandler()(batch, lambdaContext())
    const added = (await eraseRecords()).filter((key) => !recordsBefore.includes(key))
    expect(added.map((key) => /dt=([^/]+)/.exec(key)![1]).sort()).toEqual(DATES)
  })

  it('refuses an event made with another key, and changes nothing', async () => {
    const other = PseudonymizationKey.fromText('o'.repeat(40), 'test')
    const event = eraseEvent(other, 'devices', [{ column: 'device_id', value: '000003' }])
    const error = await newHandler()({ ...event, dates: DATES }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toContain(
      'history.keyCheck: was made with another pseudonymization key than the deployed one',
    )
    expect((await rowsOf('devices', DATES[0]!)).some((r) => r.device_id === '000003')).toBe(true)
  })

  it('refuses a history event on a function the stack gave no key, naming the setting', async () => {
    const event = eraseEvent(PseudonymizationKey.fromText(KEY, 'test'), 'devices', [
      { column: 'device_id', value: '000003' },
    ])
    const error = await newHandler(false)(event, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toMatch(/PSEUDONYMIZATION_SECRET_ARN: is not set/)
    expect((error as { hint?: string }).hint).toMatch(/set deployment\.historyOperations to true and deploy/)
  })

  it('refuses a value in clear in the event, without quoting it', async () => {
    const error = await newHandler()(
      {
        history: { operation: 'erase', table: 'devices', where: [{ column: 'device_id', value: 'secret-7' }] },
      } as never,
      lambdaContext(),
    ).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' })
    expect((error as Error).message).toMatch(/history\.where\.0: has unknown fields: "value"/)
    expect((error as Error).message).not.toContain('secret-7')
  })

  it('answers an erasure finished at its finish, which changes nothing', async () => {
    const event = eraseEvent(PseudonymizationKey.fromText(KEY, 'test'), 'devices', [
      { column: 'device_id', value: '000003' },
    ])
    expect(await newHandler()({ ...event, finish: true }, lambdaContext())).toEqual({
      operation: 'erase',
      table: 'devices',
      finished: true,
    })
    expect((await rowsOf('devices', DATES[0]!)).some((r) => r.device_id === '000003')).toBe(true)
  })

  // Last: the registry it moves would make the next test's exports refuse the old settings.
  it("moves a rewrite's registry at the finish only once every date is in line, and rewrites nothing there", async () => {
    const registry = () => s3.read('inventory/_schemas/devices.json')
    const before = await registry()
    const retyped = newHandler(
      true,
      TABLES.map((t) => (t.name === 'devices' ? { ...t, columnTypes: { ram_gb: 'string' } } : t)),
    )
    const event = rewriteEvent(PseudonymizationKey.fromText(KEY, 'test'), 'devices')
    await retyped({ ...event, dates: [DATES[0]!] }, lambdaContext())
    const error = await retyped({ ...event, finish: true }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toMatchObject({
      name: 'HistoryRewriteUnfinishedError',
      code: 'HISTORY_REWRITE_UNFINISHED',
      retryable: false,
    })
    expect((error as Error).message).toBe(
      'table 1001: a date of devices is not yet in line with the configuration; the registry has not moved',
    )
    expect((error as { hint?: string }).hint).toMatch(/^start the same execution input again/)
    expect(await registry()).toEqual(before)
    expect(typeof (await rowsOf('devices', DATES[1]!)).find((r) => r.ram_gb !== null)!.ram_gb).toBe('bigint')

    await retyped({ ...event, dates: DATES.slice(1) }, lambdaContext())
    expect(await registry()).toEqual(before)
    const objects = await Promise.all(DATES.map((d) => s3.read(`inventory/devices/dt=${d}/data.parquet`)))
    expect(await retyped({ ...event, finish: true }, lambdaContext())).toEqual({
      operation: 'rewrite',
      table: 'devices',
      finished: true,
    })
    expect(await registry()).not.toEqual(before)
    expect(await Promise.all(DATES.map((d) => s3.read(`inventory/devices/dt=${d}/data.parquet`)))).toEqual(objects)
    emulator.upstream.setDate('2026-03-04')
    const summary = await retyped({ tables: ['devices'], exportDate: '2026-03-04' }, lambdaContext())
    expect(summary.status).toBe('succeeded')
  })
})
