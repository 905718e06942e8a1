/**
 * The metrics side of the fault matrix: runExport directly, with a telemetry that records every event and
 * feeds the Lambda's telemetry, whose Embedded Metric Format output is captured and parsed. Retries are
 * counted, failures land in their failure class, and the token (a canary) is in no event, log line or metric.
 */
import os from 'node:os'
import path from 'node:path'
import { Logger } from '@aws-lambda-powertools/logger'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RawCsvTable, type RunningEmulator, startInventoryEmulator } from '../../../emulator/index.ts'
import { parseExportConfig } from '../../../functions/export/core/config.ts'
import type { RunRecord, TableOutcome } from '../../../functions/export/core/run-record.ts'
import { createLambdaTelemetry } from '../../../functions/export/lambda/lambda-telemetry.ts'
import { runExport } from '../../../functions/export/path/run.ts'
import type { RetryEvent, RunTelemetry } from '../../../functions/export/path/telemetry.ts'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import { serviceSource } from '../../../functions/export/source/service-source.ts'
import { CANARY_TOKEN, canaryUser, expectNoCanary } from '../../support/canary.ts'
import { tempDir } from '../../support/cli.ts'
import { type CapturedOutput, captureOutput, valuesOf } from '../../support/emf.ts'

const SERVICE = 'fault-matrix'
const SERVICE_ONLY = { service: SERVICE }
const DATE = '2026-03-15'
const MAX_ATTEMPTS = 3

const table = (id: string, rows: number): RawCsvTable => ({
  id,
  title: `Table ${id}`,
  rawCsv: `Tag,Owner\r\n${Array.from({ length: rows }, (_, i) => `T-${i},"Owner, ${i}"`).join('\r\n')}\r\n`,
})

let emulator: RunningEmulator
let output: CapturedOutput | undefined

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [table('4001', 30), table('4002', 5)], users: [canaryUser()] })
})
afterAll(() => emulator.close())
beforeEach(() => emulator.faults.clear())
afterEach(() => output?.restore())

/** Every event the run reported, as it was handed over. */
interface Recorded {
  readonly retries: RetryEvent[]
  readonly finished: TableOutcome[]
  readonly logs: { level: string; message: string; fields?: Record<string, unknown> }[]
  runs: RunRecord[]
}

const recordingTelemetry = (next: RunTelemetry): { telemetry: RunTelemetry; recorded: Recorded } => {
  const recorded: Recorded = { retries: [], finished: [], logs: [], runs: [] }
  const log =
    (level: string, forward: (message: string, fields?: Record<string, unknown>) => void) =>
    (message: string, fields?: Record<string, unknown>) => {
      recorded.logs.push({ level, message, ...(fields ? { fields } : {}) })
      forward(message, fields)
    }
  return {
    recorded,
    telemetry: {
      info: log('info', next.info),
      warn: log('warn', next.warn),
      error: log('error', next.error),
      tableStarted: (t) => next.tableStarted(t),
      tableProgress: (t, p) => next.tableProgress(t, p),
      tableFinished: (outcome) => {
        recorded.finished.push(outcome)
        next.tableFinished(outcome)
      },
      retried: (event) => {
        recorded.retries.push(event)
        next.retried(event)
      },
      runFinished: (record) => {
        recorded.runs.push(record)
        next.runFinished(record)
      },
    },
  }
}

/** One run of both tables through runExport, with the Lambda's telemetry behind a recorder. */
const exportWithMetrics = async () => {
  const out = await tempDir('fault-matrix-metrics-')
  const config = parseExportConfig({
    source: { baseUrl: emulator.baseUrl },
    tables: [
      { id: '4001', name: 'assets' },
      { id: '4002', name: 'sites' },
    ],
    export: {
      retry: { maxAttempts: MAX_ATTEMPTS, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterSeconds: 2 },
      timeouts: { idleSeconds: 1 },
    },
  })
  output = captureOutput()
  // No `sensitive` list: what is checked is that the token never reaches telemetry, not that it is scrubbed.
  const lambda = createLambdaTelemetry({ logger: new Logger({ serviceName: SERVICE }), serviceName: SERVICE })
  const { telemetry, recorded } = recordingTelemetry(lambda)
  const since = emulator.requests.length
  try {
    const record = await runExport(
      config,
      {
        source: serviceSource({ source: config.source, token: CANARY_TOKEN, tuning: config.export }),
        store: new FolderWarehouseStore(out),
        telemetry,
        spoolDirectory: path.join(os.tmpdir(), 'fault-matrix-spool'),
      },
      { exportDate: DATE },
    )
    lambda.flush()
    return { record, recorded, metrics: output.metrics(), requests: emulator.requests.slice(since), out }
  } finally {
    output.restore()
    await expectNoCanary({
      texts: { 'captured stdout and stderr': output.lines },
      payloads: { 'recorded telemetry': recorded },
      folders: [out],
    })
  }
}

const retriedCodes = (recorded: Recorded) => recorded.retries.map((r) => [r.tableId, r.error.code, r.error.status])

describe('the metrics of a run under faults', () => {
  it('counts a retry that healed a 500, and the run as successful', async () => {
    emulator.faults.script('4001', [{ kind: 'status', status: 500 }])

    const { record, recorded, metrics } = await exportWithMetrics()

    expect(record.status).toBe('succeeded')
    expect(retriedCodes(recorded)).toEqual([['4001', 'SERVER_ERROR', 500]])
    expect(recorded.retries[0]).toMatchObject({ table: 'assets', tableId: '4001' })
    expect(recorded.finished.find((o) => o.name === 'assets')).toMatchObject({ status: 'succeeded', attempts: 2 })
    expect(valuesOf(metrics, 'Retries', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(metrics, 'SuccessfulRuns', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(metrics, 'TablesSucceeded', SERVICE_ONLY)).toEqual([2])
    expect(metrics.filter((d) => d.name === 'TableFailures')).toEqual([])
    expect(valuesOf(metrics, 'Rows', { ...SERVICE_ONLY, table: 'assets' })).toEqual([30])
  })

  it('counts every retry of a 503 that never heals and files the table under "server"', async () => {
    emulator.faults.always('4001', { kind: 'status', status: 503 })

    const { record, recorded, metrics, requests } = await exportWithMetrics()

    expect(record.status).toBe('failed')
    expect(requests.filter((r) => r.path === '/rest/tables/4001/csv')).toHaveLength(MAX_ATTEMPTS)
    expect(retriedCodes(recorded)).toEqual(Array(MAX_ATTEMPTS - 1).fill(['4001', 'SERVER_ERROR', 503]))
    expect(record.tables[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, httpStatus: 503 })
    expect(valuesOf(metrics, 'Retries', SERVICE_ONLY)).toEqual([MAX_ATTEMPTS - 1])
    expect(valuesOf(metrics, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'server' })).toEqual([1])
    expect(valuesOf(metrics, 'RunsWithServerFailures', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(metrics, 'RunsWithAuthFailures', SERVICE_ONLY)).toEqual([0])
    expect(valuesOf(metrics, 'TablesFailed', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(metrics, 'TablesSucceeded', SERVICE_ONLY)).toEqual([1])
  })

  it('retries a body cut off mid-row as a whole, within the attempts, and files it under "protocol"', async () => {
    emulator.faults.always('4001', { kind: 'truncate', afterBytes: 40, advertiseLength: true })

    const { record, recorded, metrics, requests } = await exportWithMetrics()

    expect(requests.filter((r) => r.path === '/rest/tables/4001/csv')).toHaveLength(MAX_ATTEMPTS)
    expect(retriedCodes(recorded)).toEqual(Array(MAX_ATTEMPTS - 1).fill(['4001', 'BODY_TRUNCATED', 200]))
    expect(record.tables[0]).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
      error: { code: 'BODY_TRUNCATED', failureClass: 'protocol' },
    })
    expect(valuesOf(metrics, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'protocol' })).toEqual([1])
    expect(valuesOf(metrics, 'RunsWithServerFailures', SERVICE_ONLY)).toEqual([0])
    expect(valuesOf(metrics, 'Retries', SERVICE_ONLY)).toEqual([MAX_ATTEMPTS - 1])
  })

  it('fails every table under "auth" after one request when the token check answers 401', async () => {
    emulator.faults.always('me', { kind: 'status', status: 401 })

    const { record, recorded, metrics, requests } = await exportWithMetrics()

    expect(requests.map((r) => [r.path, r.status])).toEqual([['/rest/usermanager/me', 401]])
    expect(recorded.retries).toEqual([])
    expect(record.tables.map((t) => [t.name, t.error?.code, t.attempts])).toEqual([
      ['assets', 'AUTH_REJECTED', 0],
      ['sites', 'AUTH_REJECTED', 0],
    ])
    expect(valuesOf(metrics, 'RunsWithAuthFailures', SERVICE_ONLY)).toEqual([1])
    expect(valuesOf(metrics, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'auth' })).toEqual([1, 1])
    expect(valuesOf(metrics, 'SuccessfulRuns', SERVICE_ONLY)).toEqual([0])
  })

  it('does not retry a 404 and files it under "not_found", exporting the other table', async () => {
    emulator.faults.always('4001', { kind: 'status', status: 404 })

    const { record, recorded, metrics } = await exportWithMetrics()

    expect(recorded.retries).toEqual([])
    expect(record.tables.map((t) => [t.name, t.status, t.attempts])).toEqual([
      ['assets', 'failed', 1],
      ['sites', 'succeeded', 1],
    ])
    expect(valuesOf(metrics, 'TableFailures', { ...SERVICE_ONLY, failureClass: 'not_found' })).toEqual([1])
    expect(valuesOf(metrics, 'RunsWithServerFailures', SERVICE_ONLY)).toEqual([0])
  })
})
