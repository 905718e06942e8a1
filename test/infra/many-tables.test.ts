/**
 * The per-table model at scale: 200 tables, some on their own schedule and memory size, and the sample's table
 * 1,000 times, synthesized as `cdk synth` does and checked against CloudFormation's limits (500 resources, 1 MB
 * template) and cdk-nag.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions'
import { AwsSolutionsChecks } from 'cdk-nag'
import { beforeAll, describe, expect, it } from 'vitest'
import { alarmDefinitions } from '../support/alarm-definitions.ts'
import { resourcesOfType, type Synthesized, sampleConfigInput, scratchDir, synthesize } from './synth.ts'

const TABLE_COUNT = 200
/** CloudFormation's quotas for one stack. */
const MAX_RESOURCES = 500
const MAX_TEMPLATE_BYTES = 1_000_000

/** Every 10th table hourly, every 25th with 3538 MB, every 50th on a weekday cron. */
const manyTables = () =>
  Array.from({ length: TABLE_COUNT }, (_, i) => ({
    id: String(2000 + i),
    name: `t${i}`,
    ...(i % 10 === 1 ? { schedule: { expression: 'rate(1 hour)' } } : {}),
    ...(i % 50 === 7 ? { schedule: { expression: 'cron(0 6 ? * MON-FRI *)', periodHours: 24 } } : {}),
    ...(i % 25 === 3 ? { memoryMb: 3538 } : {}),
  }))

/** The sample configuration with 200 tables, with or without the three named queries per table. */
const manyTablesInput = (tableQueries: boolean) => {
  const input = sampleConfigInput() as { deployment: { athena: Record<string, unknown> } }
  return {
    ...input,
    tables: manyTables(),
    deployment: { ...input.deployment, athena: { ...input.deployment.athena, tableQueries } },
  }
}

const THOUSAND = 1000
/** The sample configuration with its table shape repeated 1,000 times (distinct ids and names), nothing else changed. */
const thousandTablesInput = (count = THOUSAND) => {
  const input = sampleConfigInput() as { tables: Record<string, unknown>[] }
  const shape = input.tables[0]!
  return {
    ...input,
    tables: Array.from({ length: count }, (_, i) => ({ ...shape, id: String(10_000 + i), name: `t${i}` })),
  }
}

/** Table name -> the nested stack its schedule is in, from the construct tree. */
const stackOfSchedule = (stack: Synthesized['stack']): Map<string, string> =>
  new Map(
    stack.tableStacks.flatMap((nested) => nested.tables.map((table): [string, string] => [table.name, nested.node.id])),
  )

describe(`the sample configuration with ${THOUSAND} tables (bundled as cdk synth does)`, () => {
  const outdir = scratchDir()
  let synthesized: Synthesized
  beforeAll(() => {
    synthesized = synthesize(thousandTablesInput(), { bundle: true, outdir })
  }, 600_000)

  it('puts no template over 500 resources: the tables are spread over nested stacks', () => {
    const counts = [synthesized.stack, ...synthesized.stack.tableStacks].map((stack) => {
      const json = JSON.parse(readFileSync(join(outdir, stack.templateFile), 'utf8')) as { Resources: object }
      return Object.keys(json.Resources).length
    })
    expect(synthesized.stack.tableStacks.length).toBeGreaterThan(1)
    expect(Math.max(...counts)).toBeLessThanOrEqual(MAX_RESOURCES)
  })

  it('keeps every table its schedule and its staleness alarm', () => {
    const schedules = resourcesOfType(synthesized.template, 'AWS::Scheduler::Schedule').map(
      ([, p]) => JSON.parse((p as { Target: { Input: string } }).Target.Input).tables[0] as string,
    )
    expect(new Set(schedules).size).toBe(THOUSAND)
    const stale = alarmDefinitions(synthesized.template.toJSON()).filter((a) => a.alarmName?.includes('-table-stale-'))
    expect(new Set(stale.map((a) => a.alarmName)).size).toBe(THOUSAND)
    expect(stale.find((a) => a.alarmName === 'InventoryExport-table-stale-t999')).toBeDefined()
  })

  it('ships the configuration of every table in the bundle, copied from a file rather than passed on a command line', () => {
    const asset = readdirSync(outdir).find((name) => existsSync(join(outdir, name, 'index.mjs')))
    const shipped = JSON.parse(readFileSync(join(outdir, asset!, 'export-config.json'), 'utf8'))
    expect(shipped.tables).toHaveLength(THOUSAND)
  })

  it('passes the cdk-nag AwsSolutions checks with no unacknowledged finding', () => {
    const violations = new AwsSolutionsChecks().validateScope(synthesized.app).violations
    expect(violations.map((v) => v.ruleName)).toEqual([])
  })

  it("moves no table's resources to another nested stack when a table is added or the list reordered", () => {
    const before = stackOfSchedule(synthesized.stack)
    const added = thousandTablesInput(THOUSAND + 1)
    const after = stackOfSchedule(synthesize({ ...added, tables: [...added.tables].reverse() }).stack)
    for (const [name, stack] of before) expect(after.get(name), name).toBe(stack)
  }, 600_000)
})

describe(`the stack with ${TABLE_COUNT} tables`, () => {
  let synthesized: Synthesized
  let template: Template
  let json: { Resources: Record<string, { Type: string }> }
  beforeAll(() => {
    synthesized = synthesize(manyTablesInput(false))
    template = synthesized.template
    json = template.toJSON() as typeof json
  }, 120_000)

  it('stays within CloudFormation limits of one stack', () => {
    const resources = Object.keys(json.Resources).length
    const bytes = Buffer.byteLength(JSON.stringify(json))
    expect(resources).toBeLessThanOrEqual(MAX_RESOURCES)
    expect(bytes).toBeLessThanOrEqual(MAX_TEMPLATE_BYTES)
  })

  it('gives every table a schedule in one group that sends its name to the function of its memory size', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1)
    template.resourceCountIs('AWS::Scheduler::Schedule', TABLE_COUNT)
    const schedules = resourcesOfType(template, 'AWS::Scheduler::Schedule').map(([, p]) => p) as {
      ScheduleExpression: string
      FlexibleTimeWindow: unknown
      Target: { Input: string; Arn: { 'Fn::GetAtt': [string, string] } }
    }[]
    const byTable = new Map(schedules.map((s) => [JSON.parse(s.Target.Input).tables[0] as string, s]))
    expect(byTable.size).toBe(TABLE_COUNT)
    expect(byTable.get('t0')).toMatchObject({ ScheduleExpression: 'cron(0 2 * * ? *)' })
    expect(byTable.get('t1')).toMatchObject({ ScheduleExpression: 'rate(1 hour)' })
    expect(byTable.get('t7')).toMatchObject({ ScheduleExpression: 'cron(0 6 ? * MON-FRI *)' })
    expect(byTable.get('t0')!.Target.Arn['Fn::GetAtt'][0]).toMatch(/^ExporterFunction[0-9A-F]{8}$/)
    expect(byTable.get('t3')!.Target.Arn['Fn::GetAtt'][0]).toMatch(/^ExporterFunction3538MB/)
    for (const schedule of schedules) {
      expect(schedule.FlexibleTimeWindow).toEqual({ Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 })
    }
  })

  it('bounds the service: reserved concurrency sums to export.concurrency, throttled runs wait one period of their fastest table', () => {
    template.resourceCountIs('AWS::Lambda::Function', 2)
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 1769, ReservedConcurrentExecutions: 1 })
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 3538, ReservedConcurrentExecutions: 1 })
    const ages = resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig').map(([, p]) => p)
    expect(ages).toHaveLength(2)
    // The default function runs hourly tables: one hour; the 3538 MB one only daily tables: Lambda's 6-hour maximum.
    expect(ages.map((p) => [p.MaximumEventAgeInSeconds, p.MaximumRetryAttempts]).sort()).toEqual([
      [21_600, 0],
      [3_600, 0],
    ])
  })

  it('has one staleness alarm per table, named after it and counted in its own periods', () => {
    const alarms = alarmDefinitions(json)
    const stale = alarms.filter((a) => a.alarmName?.startsWith('InventoryExport-table-stale-'))
    expect(stale).toHaveLength(TABLE_COUNT)
    expect(stale.find((a) => a.alarmName === 'InventoryExport-table-stale-t1')).toMatchObject({
      periodSeconds: 3600,
      evaluationPeriods: 2,
      metrics: [
        expect.objectContaining({
          metricName: 'TablesSucceeded',
          dimensions: expect.objectContaining({ table: 't1' }),
        }),
      ],
    })
    expect(stale.find((a) => a.alarmName === 'InventoryExport-table-stale-t0')).toMatchObject({ periodSeconds: 86_400 })
    expect(alarms.find((a) => a.alarmName === 'InventoryExport-function-errors')?.expression).toBe(
      'SUM([errors, errors1]) - FILL(bySource, 0)',
    )
  })

  it('passes the cdk-nag AwsSolutions checks with no unacknowledged finding', () => {
    const violations = new AwsSolutionsChecks().validateScope(synthesized.app).violations
    expect(
      violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([])
    expect(Annotations.fromStack(synthesized.stack).findError('*', Match.anyValue())).toEqual([])
  })
})

describe('table schedules that CloudFormation or CloudWatch would reject', () => {
  it('fail synth naming each field', () => {
    const input = {
      ...sampleConfigInput(),
      export: { concurrency: 1 },
      tables: [
        { id: '1', name: 'a', schedule: { expression: 'cron(0 2 * * * *)' } },
        { id: '2', name: 'b', schedule: { expression: 'cron(0 2,5 * * ? *)' } },
        { id: '3', name: 'c', schedule: { expression: 'rate(1 hours)' }, memoryMb: 4096 },
        { id: '4', name: 'd', schedule: { expression: 'rate(6 hours)', periodHours: 24 } },
      ],
    }
    let message = ''
    try {
      synthesize(input)
    } catch (error) {
      message = (error as Error).message
    }
    for (const line of [
      'tables[0].schedule.expression: exactly one of day-of-month ("*") and day-of-week ("*") must be "?"',
      'tables[1].schedule.periodHours: required when the expression does not run evenly',
      'tables[2].schedule.expression: rate(1 hours) must use the singular unit for 1',
      'tables[3].schedule.periodHours: is 24, but rate(6 hours) runs every 6 hours',
      'export.concurrency: 1 is less than the 2 memory sizes',
    ]) {
      expect(message).toContain(line)
    }
  })
})
