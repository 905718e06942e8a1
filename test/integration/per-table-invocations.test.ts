import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { ErrorCode } from '../../functions/export/core/errors.ts'
import { createHandler, type ExportSummary, type RunFailedError } from '../../functions/export/lambda/handler.ts'
import { type LatestOutcome, latestOutcomeKey } from '../../functions/export/path/run-index.ts'
import { scheduleInput } from '../../infra/constructs/table-schedules.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import { captureOutput, lambdaContext } from '../support/emf.ts'
import { lambdaEnvironment, DEMO_TABLE_CONFIG as TABLES, tokenSecretStandIn } from '../support/lambda.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

let emulator: RunningEmulator
let s3: RunningS3
const { client: secretsClient } = tokenSecretStandIn(DEMO_TOKEN)
const { client: glueClient } = emptyGlueCatalog()

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 200, software: 300, users: 50 } }) })
  s3 = await startS3('warehouse')
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})

/** A handler in a container of its own, as each concurrent invocation gets. */
const newHandler = () =>
  createHandler({
    environment: lambdaEnvironment({
      source: { baseUrl: emulator.baseUrl },
      exportTuning: { deadlineMarginSeconds: 5 },
    }),
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })

const latest = async (table: string): Promise<LatestOutcome> =>
  JSON.parse((await s3.read(`inventory/${latestOutcomeKey(table)}`))!.toString()) as LatestOutcome

describe('one invocation per table, driven by the event each schedule sends', () => {
  it('exports each table in its own invocation; one reaching its own deadline leaves the others untouched', async () => {
    const output = captureOutput()
    // installed_software answers after 7 s; its invocation has 8 s and stops it at 5.5 s. The others have 15 minutes.
    emulator.faults.script('1002', [{ kind: 'delay', ms: 7_000 }])
    const results = await Promise.all(
      TABLES.map((table) =>
        newHandler()(scheduleInput(table.name), lambdaContext(table.name === 'installed_software' ? 8_000 : 900_000))
          .then((summary): ExportSummary => summary)
          .catch((error: RunFailedError) => error.summary),
      ),
    ).finally(() => output.restore())

    expect(results.map((summary) => summary.tables.map((t) => [t.name, t.status, t.error?.code]))).toEqual([
      [['devices', 'succeeded', undefined]],
      [['installed_software', 'failed', ErrorCode.DEADLINE_EXCEEDED]],
      [['users', 'succeeded', undefined]],
    ])
    // Three invocations, three runs, three run records.
    expect(new Set(results.map((summary) => summary.runId)).size).toBe(3)
    const exportDate = results[0]!.exportDate
    expect(await s3.read(`inventory/devices/dt=${exportDate}/data.parquet`)).toBeDefined()
    expect(await s3.read(`inventory/users/dt=${exportDate}/data.parquet`)).toBeDefined()
    expect(await s3.read(`inventory/installed_software/dt=${exportDate}/data.parquet`)).toBeUndefined()
    expect(await s3.pendingUploads()).toEqual([])
  }, 30_000)

  it("keeps each table's latest outcome under _runs/latest/, a failed table still pointing at its last success", async () => {
    const devices = await latest('devices')
    expect(devices).toMatchObject({ table: 'devices', tableId: '1001', status: 'succeeded', rows: 200 })
    expect(devices.lastSuccess?.runId).toBe(devices.runId)
    expect(await s3.read(`inventory/${devices.runRecord}`)).toBeDefined()
    expect(await latest('installed_software')).toMatchObject({
      status: 'failed',
      error: { code: ErrorCode.DEADLINE_EXCEEDED, failureClass: 'deadline' },
    })
    expect((await latest('installed_software')).lastSuccess).toBeUndefined()

    const succeeded = await newHandler()(scheduleInput('installed_software'), lambdaContext())
    emulator.faults.always('1002', { kind: 'status', status: 404 })
    const failed = await newHandler()(scheduleInput('installed_software'), lambdaContext()).catch(
      (error: RunFailedError) => error.summary,
    )
    emulator.faults.clear()
    expect(failed.status).toBe('failed')
    expect(await latest('installed_software')).toMatchObject({
      status: 'failed',
      runId: failed.runId,
      error: { code: ErrorCode.TABLE_NOT_FOUND },
      lastSuccess: { runId: succeeded.runId, exportDate: succeeded.exportDate },
    })
  }, 30_000)
})
