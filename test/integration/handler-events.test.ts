/**
 * Events mean what they say: the Lambda handler refuses an event that would widen the run (an empty list of tables,
 * a scheduled event's envelope with fields beside its detail) before it calls the service, and quotes what it was
 * sent by a short prefix only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { ConfigError } from '../../functions/export/core/errors.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { lambdaContext } from '../support/emf.ts'
import { lambdaEnvironment, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATE = '2026-03-01'
let emulator: RunningEmulator
let s3: RunningS3
const { client: secretsClient } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient } = emptyGlueCatalog()

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 20, software: 20, users: 20 } }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})
beforeEach(() => emulator.faults.clear())

const invoke = (event: unknown) =>
  createHandler({
    environment: lambdaEnvironment({ source: { baseUrl: emulator.baseUrl } }),
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })(event as never, lambdaContext())

/** The envelope EventBridge Scheduler and rules send. */
const envelope = (detail: unknown) => ({
  version: '0',
  id: 'e2f6c3d4-1111-4222-8333-944455556666',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: `${DATE}T02:00:00Z`,
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/inventory-export'],
  detail,
})

describe('the Lambda event', () => {
  it.each([
    [{ tables: [] }, 'tables: must name at least one table; leave tables out to export every table'],
    [{ ...envelope({}), tables: ['users'] }, 'tables: is beside a scheduled event\'s "detail"'],
    [{ 'detail-type': 'Scheduled Event', detail: null, tables: ['users'] }, 'detail: must be a JSON object'],
    [envelope({ tables: [] }), 'detail.tables: must name at least one table'],
    [{ tabels: ['users'] }, 'tabels: is not a known key; did you mean "tables"?'],
    [envelope({ exportdate: DATE }), 'detail.exportdate: is not a known key; did you mean "exportDate"?'],
    [{ ...envelope({}), regoin: 'us-east-1' }, 'regoin: is not a known key; did you mean "region"?'],
    [{ tables: [''] }, 'tables[0]: must be a table id or name, not empty'],
    [{ exportDate: `${DATE}x` }, 'exportDate: must be a calendar date as YYYY-MM-DD'],
  ])('refuses %j before calling the service', async (event, message) => {
    const before = emulator.requests.length

    const error = await invoke(event).catch((e: unknown) => e)

    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message).toContain(message)
    expect(emulator.requests.length).toBe(before)
  })

  it('quotes a 10 MB table name by a short prefix in the error', async () => {
    const name = `users${'x'.repeat(10_000_000)}`

    const error = await invoke({ tables: [name] }).catch((e: unknown) => e)

    expect(error).toBeInstanceOf(ConfigError)
    const { message } = error as ConfigError
    expect(message).toBe('invalid invocation event:\n  - tables[0]: must be at most 256 characters')
  })

  it('quotes a configured-length table name that is unknown by a prefix and its length, on one line', async () => {
    const name = `users\n${'y'.repeat(200)}`

    const error = await invoke({ tables: [name] }).catch((e: unknown) => e)

    expect((error as ConfigError).problems).toEqual([
      { field: 'tables[0]', message: `"users\\n${'y'.repeat(34)}"... (206 characters) is not a configured table` },
    ])
  })

  it('names a 10 MB unknown key by its prefix', async () => {
    const key = 'k'.repeat(10_000_000)

    const error = await invoke({ [key]: true }).catch((e: unknown) => e)

    expect((error as Error).message.length).toBeLessThan(400)
    expect((error as ConfigError).problems[0]!.field).toBe(`"${'k'.repeat(64)}"... (10,000,000 characters)`)
  })

  it('still runs the tables named in the detail of a scheduled event', async () => {
    const summary = await invoke(envelope({ tables: ['users'], exportDate: DATE }))

    expect(summary.tables.map((t) => t.name)).toEqual(['users'])
  })
})
