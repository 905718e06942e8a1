/**
 * One writer per table on AWS, offline: the scheduled export's invocation and the history state machine's
 * executions (plan, batches, finish), as the synthesized roles may, against the harness's versioned S3 behind IAM.
 * Each pair (an export and an erasure, an export with the old settings and a rewrite, two erasures, an export that
 * expires dates and a rewrite) started together ends in the state of the two run one after the other; the export
 * that found the table held by a request's lease waited for it, and nothing was refused.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { GlueClient } from '@aws-sdk/client-glue'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { PseudonymizationKey } from '../../functions/export/core/pseudonymization-key.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { eraseEvent, rewriteEvent } from '../../functions/export/lambda/history-event.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import { synthesize } from '../infra/synth.ts'
import { tempDir } from '../support/cli.ts'
import { captureOutput, lambdaContext } from '../support/emf.ts'
import { S3RVER_CREDENTIALS } from '../support/s3rver.ts'
import { warehouseState } from '../support/warehouse-state.ts'
import { startAwsHarness } from './harness.ts'
import { Authorizer } from './iam.ts'
import {
  functionEnvironment,
  LOCAL_REGION,
  resolveIntrinsics,
  rolePolicies,
  type SynthesizedTemplate,
} from './role-policy.ts'
import { type Definition, runStateMachine } from './state-machine.ts'

const NAMES = {
  bucket: 'warehouse-one-writer',
  secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf',
}
const KEY_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-key-XyZ123'
const KEY = randomBytes(32).toString('hex')
const DATES = ['2026-10-01', '2026-10-02']
const NEXT = '2026-10-03'
const DEVICES = { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }

const input = () => ({
  source: { baseUrl: 'https://inventory.example.com' },
  // A retention the stack grants deletes for; the "expire" export is deployed with a shorter one.
  tables: [{ ...DEVICES, retention: { days: 30 } }],
  warehouse: { prefix: 'inventory' },
  deployment: { pseudonymizationSecret: { nameOrArn: KEY_SECRET_ARN }, historyOperations: { enabled: true } },
})

let emulator: RunningEmulator
let template: SynthesizedTemplate
let runtimeConfig: { tables: Record<string, unknown>[] }
let definition: Definition
let work: string

/** The history function's environment as the template sets it, with `table`'s settings as those deployed. */
const environmentWith = (table: Record<string, unknown>): Record<string, string> =>
  functionEnvironment(template, NAMES, 'ExporterHistoryFunction', {
    ...runtimeConfig,
    tables: [{ ...runtimeConfig.tables[0], ...table }],
  })

/** A fresh account: the harness, with two dates of the table exported by the schedule's invocations. */
const world = async () => {
  const aws = await startAwsHarness({
    template,
    names: NAMES,
    secretValue: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }),
    otherSecrets: [{ arn: KEY_SECRET_ARN, value: KEY }],
    versioned: true,
  })
  const clients = { region: LOCAL_REGION, endpoint: aws.json.endpoint, credentials: S3RVER_CREDENTIALS }
  const handlerWith = (table: Record<string, unknown> = {}) =>
    createHandler({
      environment: environmentWith(table),
      s3Client: aws.s3.client,
      secretsClient: new SecretsManagerClient(clients),
      glueClient: new GlueClient(clients),
      spoolDirectory: path.join(work, 'spool'),
    })
  const key = PseudonymizationKey.fromText(KEY, 'test')
  const execute = (handler: ReturnType<typeof handlerWith>, event: unknown) =>
    runStateMachine(definition, event, {
      authorizer: new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES)),
      invoke: (_arn, payload) => handler(payload as never, lambdaContext()),
    })
  const exportOf = (table: Record<string, unknown>) => async () => {
    const summary = await handlerWith(table)({ tables: ['devices'], exportDate: NEXT }, lambdaContext())
    expect(summary.status).toBe('succeeded')
  }
  const erasure = (device: string) => async () => {
    await execute(handlerWith(), eraseEvent(key, 'devices', [{ column: 'device_id', value: device }]))
  }
  const operations = {
    export: exportOf({}),
    expire: exportOf({ retention: { days: 2 } }),
    erase7: erasure('000007'),
    erase11: erasure('000011'),
    rewrite: async () => {
      await execute(handlerWith({ columnTypes: { ram_gb: 'string' } }), rewriteEvent(key, 'devices'))
    },
  }
  for (const date of DATES) {
    emulator.upstream.setDate(date)
    expect((await handlerWith()({ tables: ['devices'], exportDate: date }, lambdaContext())).status).toBe('succeeded')
  }
  emulator.upstream.setDate(NEXT)
  const state = () => warehouseState(new S3WarehouseStore(aws.s3.client, NAMES.bucket, 'inventory'))
  return { aws, operations, state }
}
type Operation = keyof Awaited<ReturnType<typeof world>>['operations']

/** The state `run` leaves in a fresh account, the account's requests all allowed. */
const stateAfter = async (run: (operations: Record<Operation, () => Promise<void>>) => Promise<unknown>) => {
  const { aws, operations, state } = await world()
  try {
    await run(operations)
    expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
    return await state()
  } finally {
    await aws.close()
  }
}

let output: ReturnType<typeof captureOutput> | undefined

beforeAll(async () => {
  work = await tempDir('one-writer-aws-')
  const synthesized = synthesize(input())
  template = synthesized.template.toJSON() as SynthesizedTemplate
  runtimeConfig = synthesized.stack.exporter.runtimeConfig as typeof runtimeConfig
  const [, machine] = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine')!
  definition = JSON.parse(resolveIntrinsics(machine.Properties?.DefinitionString, template, NAMES) as string)
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 30, software: 5, users: 5 } }) })
  output = captureOutput()
}, 120_000)
afterAll(async () => {
  output?.restore()
  await emulator?.close()
})

describe('two writers of one table on AWS, as the synthesized roles may', () => {
  it.each([
    ['export', 'erase7'],
    ['export', 'rewrite'],
    ['erase7', 'erase11'],
    ['expire', 'rewrite'],
  ] as const)(
    '%s and %s started together end as the two run one after the other',
    async (a, b) => {
      const serial = [
        await stateAfter(async (ops) => {
          await ops[a]()
          await ops[b]()
        }),
        await stateAfter(async (ops) => {
          await ops[b]()
          await ops[a]()
        }),
      ]
      const together = await stateAfter((ops) => Promise.all([ops[a](), ops[b]()]))
      expect(serial).toContainEqual(together)
    },
    120_000,
  )
})
