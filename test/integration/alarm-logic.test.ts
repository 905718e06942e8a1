import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { mockClient } from 'aws-sdk-client-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DEMO_TOKEN,
  DEMO_TOKENS,
  demoTables,
  type RunningEmulator,
  startInventoryEmulator,
} from '../../emulator/index.ts'
import { createHandler, type ExportEvent } from '../../functions/export/lambda/handler.ts'
import { sampleConfigInput, synthesize } from '../infra/synth.ts'
import { type AlarmDefinition, alarmDefinitions } from '../support/alarm-definitions.ts'
import { emptyGlueCatalog } from '../support/aws-mocks.ts'
import {
  type AlarmState,
  alarmSeries,
  captureOutput,
  evaluateAlarm,
  lambdaContext,
  type MetricDatum,
  valuesOf,
} from '../support/emf.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:InventoryExportToken-AbCdEf'

interface Scenario {
  readonly name: string
  /** undefined: the schedule did not run in this period (no invocation, no data). */
  readonly arrange?: (emulator: RunningEmulator) => { token: string }
}

const healthy = () => ({ token: DEMO_TOKEN })
const persistent500On1002 = (emulator: RunningEmulator) => {
  emulator.faults.always('1002', { kind: 'status', status: 500 })
  return healthy()
}
const SCENARIOS: readonly Scenario[] = [
  { name: 'success', arrange: healthy },
  {
    name: 'one 500, absorbed by a retry',
    arrange: (emulator) => {
      emulator.faults.script('1002', [{ kind: 'status', status: 500 }])
      return healthy()
    },
  },
  { name: 'persistent 500', arrange: persistent500On1002 },
  { name: 'success', arrange: healthy },
  {
    name: 'persistent 503 on every table',
    arrange: (emulator) => {
      emulator.faults.always('*', { kind: 'status', status: 503 })
      return healthy()
    },
  },
  { name: '401: revoked token', arrange: () => ({ token: DEMO_TOKENS.revoked }) },
  { name: 'success', arrange: healthy },
  { name: 'success', arrange: healthy },
  {
    name: 'HTML page instead of a CSV',
    arrange: (emulator) => {
      emulator.faults.script('1003', [{ kind: 'html200' }])
      return healthy()
    },
  },
  { name: 'no run (schedule disabled)' },
  { name: 'no run (schedule disabled)' },
  { name: 'success', arrange: healthy },
  { name: 'installed_software: 500', arrange: persistent500On1002 },
  { name: 'installed_software: 500', arrange: persistent500On1002 },
]

let emulator: RunningEmulator
let s3: RunningS3
let alarms: AlarmDefinition[]
let functionEnv: Record<string, string>
let runtimeConfig: object
let functionLogicalId: string
/** The input of every table's schedule, exactly as synthesized. */
let scheduleInputs: unknown[]
/** Per period: the data points CloudWatch would hold, and what each run did. */
const periods: MetricDatum[][] = []
const threw: (boolean | undefined)[] = []

beforeAll(async () => {
  const { template, stack } = synthesize(sampleConfigInput())
  runtimeConfig = stack.exporter.runtimeConfig
  const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> }
  alarms = alarmDefinitions(json)
  const [id, fn] = Object.entries(json.Resources).find(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === 'index.handler',
  )!
  functionLogicalId = id
  scheduleInputs = Object.values(json.Resources)
    .filter((r) => r.Type === 'AWS::Scheduler::Schedule')
    .map((r) => JSON.parse((r.Properties.Target as { Input: string }).Input))
  functionEnv = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 50, software: 80, users: 20 } }) })
  s3 = await startS3('warehouse')
  await runScenarios()
}, 120_000)

afterAll(async () => {
  await emulator?.close()
  await s3?.close()
})

/** The synthesized runtime configuration with fast retries; the base URL comes from the (JSON) secret. */
const exportConfig = (): string => {
  const config = structuredClone(runtimeConfig) as { export: { retry: Record<string, unknown> } }
  config.export.retry = { ...config.export.retry, baseDelayMs: 1, maxDelayMs: 5 }
  return JSON.stringify(config)
}

const runScenarios = async () => {
  for (const scenario of SCENARIOS) {
    emulator.faults.clear()
    if (scenario.arrange === undefined) {
      periods.push([])
      threw.push(undefined)
      continue
    }
    const { token } = scenario.arrange(emulator)
    // Each table's schedule invokes the function on its own, with the exact event the schedule sends.
    const data: MetricDatum[] = []
    const outcomes: boolean[] = []
    for (const input of scheduleInputs) {
      const failed = await invoke(input, token)
      data.push(...failed.metrics)
      outcomes.push(failed.threw)
    }
    periods.push(data)
    threw.push(outcomes.some(Boolean))
  }
}

/** One invocation in a new container (the secret is read afresh); its metrics and whether it threw. */
const invoke = async (event: unknown, token: string): Promise<{ metrics: MetricDatum[]; threw: boolean }> => {
  const secretsClient = new SecretsManagerClient({ region: 'us-east-1' })
  mockClient(secretsClient)
    .on(GetSecretValueCommand)
    .resolves({ SecretString: JSON.stringify({ token, baseUrl: emulator.baseUrl }) })
  const { client: glueClient } = emptyGlueCatalog()
  const handler = createHandler({
    environment: {
      EXPORT_CONFIG: exportConfig(),
      WAREHOUSE_BUCKET: s3.bucket,
      TOKEN_SECRET_ARN: SECRET_ARN,
      POWERTOOLS_SERVICE_NAME: functionEnv.POWERTOOLS_SERVICE_NAME,
    },
    s3Client: s3.client,
    secretsClient,
    glueClient,
  })
  const output = captureOutput()
  const failed = await handler(event as ExportEvent, lambdaContext()).then(
    () => false,
    () => true,
  )
  output.restore()
  // The runtime's own metric: Errors is 1 for an invocation that threw, 0 otherwise.
  const errors = {
    namespace: 'AWS/Lambda',
    name: 'Errors',
    unit: 'Count',
    dimensions: { FunctionName: `<${functionLogicalId}>` },
    values: [failed ? 1 : 0],
  }
  return { metrics: [...output.metrics(), errors], threw: failed }
}

const alarm = (logicalIdPart: string): AlarmDefinition => {
  const found = alarms.find((a) => a.logicalId.includes(logicalIdPart))
  if (found === undefined) throw new Error(`no alarm ${logicalIdPart} in ${alarms.map((a) => a.logicalId).join(', ')}`)
  return found
}
const states = (logicalIdPart: string): AlarmState[] => {
  const definition = alarm(logicalIdPart)
  return evaluateAlarm(alarmSeries(definition, periods), definition)
}

describe('the synthesized alarms over the metrics of a sequence of runs', () => {
  it('reads the settings the sample configuration asks for', () => {
    expect(alarm('PersistentSourceFailures')).toMatchObject({
      expression: 'MAX([auth, server])',
      periodSeconds: 86_400,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      threshold: 1,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      treatMissingData: 'notBreaching',
    })
    expect(scheduleInputs).toEqual([{ tables: ['devices'] }, { tables: ['installed_software'] }, { tables: ['users'] }])
    expect(alarm('Staleinstalledsoftware')).toMatchObject({
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: 'breaching',
    })
  })

  it('counts a transient 500 that a retry absorbed as a retry, not as a failed run', () => {
    const service = { service: functionEnv.POWERTOOLS_SERVICE_NAME! }
    expect(valuesOf(periods[1]!, 'Retries', service)).toEqual([0, 1, 0])
    expect(valuesOf(periods[1]!, 'RunsWithServerFailures', service)).toEqual([0, 0, 0])
    expect(valuesOf(periods[1]!, 'SuccessfulRuns', service)).toEqual([1, 1, 1])
    expect(threw[1]).toBe(false)
  })

  it('fires each alarm exactly in the periods its settings say, naming the stale table, and not on an absorbed blip', () => {
    const timeline = SCENARIOS.map((scenario, i) =>
      [
        String(i + 1).padStart(2),
        scenario.name.padEnd(30),
        states('PersistentSourceFailures')[i]!.padEnd(8),
        states('FunctionErrors')[i]!.padEnd(8),
        states('Staledevices')[i]!.padEnd(8),
        states('Staleinstalledsoftware')[i]!.padEnd(8),
        states('Staleusers')[i]!.padEnd(8),
        states('UndeliveredRuns')[i]!,
      ].join(' '),
    )
    expect(timeline).toEqual([
      //                                 persistent errors  stale:devices installed_software users  undelivered
      ' 1 success                        OK       OK       OK       OK       OK       OK',
      ' 2 one 500, absorbed by a retry   OK       OK       OK       OK       OK       OK',
      ' 3 persistent 500                 OK       OK       OK       OK       OK       OK',
      ' 4 success                        OK       OK       OK       OK       OK       OK',
      ' 5 persistent 503 on every table  ALARM    OK       OK       OK       OK       OK',
      ' 6 401: revoked token             ALARM    OK       ALARM    ALARM    ALARM    OK',
      ' 7 success                        ALARM    OK       OK       OK       OK       OK',
      ' 8 success                        OK       OK       OK       OK       OK       OK',
      ' 9 HTML page instead of a CSV     OK       ALARM    OK       OK       OK       OK',
      '10 no run (schedule disabled)     OK       OK       OK       OK       ALARM    OK',
      '11 no run (schedule disabled)     OK       OK       ALARM    ALARM    ALARM    OK',
      '12 success                        OK       OK       OK       OK       OK       OK',
      '13 installed_software: 500        OK       OK       OK       OK       OK       OK',
      '14 installed_software: 500        ALARM    OK       OK       ALARM    OK       OK',
    ])
  })
})

describe('the guard-held alarm over a table that shrinks, is held, and is accepted', () => {
  /** One run per period: the day the stand-in acts out, its upstream change, and the invocation's event. */
  const DAYS: readonly { name: string; date: string; keepRows?: number; acceptChanges?: boolean }[] = [
    { name: 'first export', date: '2026-10-01' },
    { name: 'devices at 40 %: warned', date: '2026-10-02', keepRows: 0.4 },
    { name: 'devices at 5 % of that: held', date: '2026-10-03', keepRows: 0.05 },
    { name: 'still held the next day', date: '2026-10-04' },
    { name: 'accepted (acceptChanges)', date: '2026-10-04', acceptChanges: true },
    { name: 'the accepted size again', date: '2026-10-05' },
  ]
  const guardPeriods: MetricDatum[][] = []
  let guardS3: RunningS3

  beforeAll(async () => {
    guardS3 = await startS3('guards')
    emulator.faults.clear()
    for (const day of DAYS) {
      emulator.upstream.setDate(day.date)
      if (day.keepRows !== undefined) emulator.upstream.add({ tableId: '1001', from: day.date, keepRows: day.keepRows })
      const secretsClient = new SecretsManagerClient({ region: 'us-east-1' })
      mockClient(secretsClient)
        .on(GetSecretValueCommand)
        .resolves({ SecretString: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }) })
      const handler = createHandler({
        environment: {
          EXPORT_CONFIG: exportConfig(),
          WAREHOUSE_BUCKET: guardS3.bucket,
          TOKEN_SECRET_ARN: SECRET_ARN,
          POWERTOOLS_SERVICE_NAME: functionEnv.POWERTOOLS_SERVICE_NAME,
        },
        s3Client: guardS3.client,
        secretsClient,
        glueClient: emptyGlueCatalog().client,
      })
      const output = captureOutput()
      const event = { tables: ['devices'], exportDate: day.date, ...(day.acceptChanges ? { acceptChanges: true } : {}) }
      const failed = await handler(event, lambdaContext()).then(
        () => false,
        () => true,
      )
      output.restore()
      const errors = {
        namespace: 'AWS/Lambda',
        name: 'Errors',
        unit: 'Count',
        dimensions: { FunctionName: `<${functionLogicalId}>` },
        values: [failed ? 1 : 0],
      }
      guardPeriods.push([...output.metrics(), errors])
    }
    emulator.upstream.clear()
  }, 120_000)
  afterAll(async () => {
    await guardS3?.close()
  })

  it('pages on the first hold, stays until accepted, and leaves the hold to it rather than to function errors', () => {
    const stateOf = (logicalIdPart: string) => {
      const definition = alarm(logicalIdPart)
      return evaluateAlarm(alarmSeries(definition, guardPeriods), definition)
    }
    expect(alarm('GuardHeld')).toMatchObject({
      metrics: [{ metricName: 'GuardHeld', dimensions: { service: functionEnv.POWERTOOLS_SERVICE_NAME } }],
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
    })
    const timeline = DAYS.map((day, i) =>
      [day.name.padEnd(30), stateOf('GuardHeld')[i]!.padEnd(8), stateOf('FunctionErrors')[i]!].join(' '),
    )
    expect(timeline).toEqual([
      //                               held     errors
      'first export                   OK       OK',
      'devices at 40 %: warned        OK       OK',
      'devices at 5 % of that: held   ALARM    OK',
      'still held the next day        ALARM    OK',
      'accepted (acceptChanges)       OK       OK',
      'the accepted size again        OK       OK',
    ])
    const service = { service: functionEnv.POWERTOOLS_SERVICE_NAME!, table: 'devices' }
    expect(guardPeriods.map((data) => valuesOf(data, 'GuardWarned', service))).toEqual([[0], [1], [0], [0], [0], [0]])
  })
})
