/**
 * The history operations' state machine as synthesized, for a request of many dates: its definition is one Step
 * Functions accepts (the Amazon States Language schema cfn-lint checks with, and the Distributed Map's own rules),
 * and driven as Step Functions runs it (state-machine.ts) a 400-date erasure plans into the Distributed Map, each
 * batch a child execution the state machine's role may start, each carrying the request, its dates and the plan's
 * lease; a 399-date one stays in the inline Map. The function is a stand-in answering as the history function does.
 * The exporter role may delete earlier object versions of the tables' dated data and raw bodies only.
 */
import { describe, expect, it } from 'vitest'
import { synthesize } from '../infra/synth.ts'
import { Authorizer } from './iam.ts'
import { resolveIntrinsics, rolePolicies, type SynthesizedTemplate } from './role-policy.ts'
import { type Definition, runStateMachine } from './state-machine.ts'
import { stateMachineProblems } from './state-machine-schema.ts'

const NAMES = { bucket: 'warehouse', secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf' }
const LEASE = 'erase-0123456789abcdef'
const REQUEST = { operation: 'erase', table: 'devices', where: [{ column: 'device_id', digest: 'a'.repeat(32) }] }

const { template: synthesized } = synthesize({
  source: { baseUrl: 'https://inventory.example.com' },
  tables: [{ id: '1001', name: 'devices', key: ['device_id'] }],
  deployment: { historyOperations: { enabled: true, maxConcurrency: 8 } },
})
const template = synthesized.toJSON() as SynthesizedTemplate
const [machineId, machine] = Object.entries(template.Resources).find(
  ([, r]) => r.Type === 'AWS::StepFunctions::StateMachine',
)!
const definition = JSON.parse(
  resolveIntrinsics(machine.Properties?.DefinitionString, template, NAMES) as string,
) as Definition & Record<string, unknown>
const stateMachineArn = resolveIntrinsics({ Ref: machineId }, template, NAMES) as string

/** Daily dates from 2025-01-01. */
const datesOf = (count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10))

/** The state machine on a plan of `count` dates, the history function answering as it does. */
const execute = (count: number) => {
  const dates = datesOf(count)
  const batches: string[][] = []
  for (let i = 0; i < dates.length; i += 5) batches.push(dates.slice(i, i + 5))
  return runStateMachine(
    definition,
    { history: REQUEST },
    {
      authorizer: new Authorizer(rolePolicies(template, 'HistoryOperationsStateMachineRole', NAMES)),
      stateMachineArn,
      invoke: async (_arn, payload) => {
        const event = payload as { dates?: string[]; finish?: true }
        if (event.finish) return { operation: 'erase', table: 'devices', finished: true }
        if (event.dates === undefined) {
          return { operation: 'erase', table: 'devices', dates: count, batches, lease: LEASE }
        }
        return {
          operation: 'erase',
          table: 'devices',
          rows: 1,
          dates: event.dates.map((d) => ({ exportDate: d, rows: 1 })),
        }
      },
    },
  )
}

describe("the exporter role's rights on earlier versions", () => {
  it('delete them only on the tables data and raw bodies, never on the bookkeeping beside them', async () => {
    const role = new Authorizer(rolePolicies(template, 'ExporterRole', NAMES))
    const object = (key: string) => `arn:aws:s3:::${NAMES.bucket}/inventory/${key}`
    const purge = async (key: string) =>
      (await role.decide({ action: 's3:DeleteObjectVersion', resource: object(key) })).allowed
    for (const key of ['devices/dt=2026-10-01/data.parquet', '_raw/devices/dt=2026-10-01/body.csv.gz']) {
      expect(await purge(key), key).toBe(true)
    }
    for (const key of [
      '_schemas/devices.json',
      '_runs/dt=2026-10-01/x.json',
      '_export_dates/devices/dt=2026-10-01/dates.parquet',
      '_leases/devices.json',
      'devices_2/dt=2026-10-01/data.parquet',
    ]) {
      expect(await purge(key), key).toBe(false)
    }
    const list = async (prefix: string) =>
      (
        await role.decide({
          action: 's3:ListBucketVersions',
          resource: `arn:aws:s3:::${NAMES.bucket}`,
          context: { 's3:prefix': prefix },
        })
      ).allowed
    expect(await list('inventory/devices/dt=2026-10-01/')).toBe(true)
    expect(await list('inventory/_raw/devices/dt=2026-10-01/')).toBe(true)
    expect(await list('inventory/_runs/')).toBe(false)
    expect(await list('inventory/')).toBe(false)
  })
})

describe('the history state machine for a request of many dates', () => {
  it('is a definition Step Functions accepts, by the States Language schema and the Distributed Map rules', () => {
    expect(stateMachineProblems(definition)).toEqual([])
    // The check bites: a Map with a field the language does not have, and a Distributed Map with no execution type.
    const broken = structuredClone(definition) as unknown as { States: Record<string, Record<string, unknown>> }
    broken.States.Batches!.Items2 = '$.plan.batches'
    const processor = broken.States.ManyBatches!.ItemProcessor as { ProcessorConfig: Record<string, unknown> }
    delete processor.ProcessorConfig.ExecutionType
    expect(stateMachineProblems(broken as never)).toEqual([
      '/States/Batches: additionalProperties must NOT have additional properties',
      '/States/Batches: if must match "then" schema',
      'ManyBatches: a Distributed Map needs ProcessorConfig.ExecutionType STANDARD or EXPRESS',
    ])
  })

  it('runs a 400-date erasure as child executions of a Distributed Map, each with the request, its dates and the lease', async () => {
    const { output, execution } = await execute(400)
    const states = execution.invocations.map((i) => i.state)
    expect(states).toEqual(['Plan', ...Array(80).fill('DistributedBatch'), 'Finish'])
    expect(execution.childExecutions).toBe(80)
    expect(execution.peakConcurrency).toBeLessThanOrEqual(8)
    const sent = execution.invocations.filter((i) => i.state === 'DistributedBatch').map((i) => i.payload)
    expect(sent[0]).toEqual({ history: REQUEST, dates: datesOf(5), lease: LEASE })
    expect(sent.flatMap((p) => (p as { dates: string[] }).dates)).toEqual(datesOf(400))
    expect(execution.invocations.at(-1)!.payload).toEqual({ history: REQUEST, finish: true, lease: LEASE })
    const batches = (output as { batches: { rows: number; dates: number }[] }).batches
    expect(batches.reduce((sum, b) => sum + b.dates, 0)).toBe(400)
  })

  it('keeps a request under the threshold in the inline Map', async () => {
    const { execution } = await execute(399)
    expect(execution.invocations.filter((i) => i.state === 'Batch')).toHaveLength(80)
    expect(execution.childExecutions).toBe(0)
  })
})
