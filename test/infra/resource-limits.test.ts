import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../functions/export/core/errors.ts'
import { MIN_WORK_SECONDS } from '../../functions/export/core/lambda-budget.ts'
import { RESOURCE_LIMITS } from '../../infra/constructs/resource-limits.ts'
import { parseDeployConfig } from '../../infra/deployment-config.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'
import { sampleConfigInput, sampleWith, synthesize } from './synth.ts'

/** The problems `synthesize` (the stack, in this process) refuses `input` with; fails when it synthesizes. */
const refusal = (input: Record<string, unknown>) => {
  try {
    synthesize(input)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).code).toBe('CONFIG_INVALID')
    return (error as ConfigError).problems
  }
  throw new Error('the configuration synthesized')
}

/** The sample with these tables and `deployment` merged in. */
const withTables = (tables: readonly Record<string, unknown>[], deployment: Record<string, unknown> = {}) => ({
  ...sampleWith({ deployment }),
  tables,
})

describe('the configuration refuses at synth what CloudFormation would reject', () => {
  it('refuses a keyed table name that makes a named query name longer than 128, naming the table', () => {
    const name = `t${'x'.repeat(89)}`
    const problems = refusal(withTables([{ id: '1001', name, key: ['device_id'] }]))
    expect(problems).toEqual([
      {
        field: 'tables[0].name',
        message: expect.stringMatching(
          /^makes the named query ".*: what changed since the previous export" 130 characters long, over the 128 of AWS::Athena::NamedQuery\.Name; choose a shorter table name or set deployment\.athena\.tableQueries to false$/,
        ),
      },
    ])
  })

  it('accepts that name when the stack saves no named queries per table', () => {
    const name = `t${'x'.repeat(89)}`
    expect(() =>
      parseDeployConfig(withTables([{ id: '1001', name, key: ['device_id'] }], { athena: { tableQueries: false } })),
    ).not.toThrow()
  })

  it('refuses a long stack name with a long table name whose staleness alarm name would pass 255', () => {
    const problems = refusal(
      withTables([{ id: '1001', name: `t${'x'.repeat(127)}` }], {
        stackName: `S${'s'.repeat(127)}`,
        athena: { tableQueries: false },
      }),
    )
    expect(problems.map((p) => p.field)).toContain('tables[0].name')
    expect(problems.find((p) => p.message.includes('AlarmName'))?.message).toMatch(
      /^makes its staleness alarm name 269 characters long, over the 255 of AWS::CloudWatch::Alarm\.AlarmName; choose a shorter table name or a shorter deployment\.stackName$/,
    )
  })

  it('refuses a warehouse prefix that makes a staleness alarm description longer than 1024', () => {
    const prefix = Array.from({ length: 60 }, (_, i) => `segment${i}`).join('/')
    const problems = refusal({ ...sampleWith({ warehouse: { prefix } }), tables: [{ id: '1001', name: 'devices' }] })
    expect(problems).toEqual([
      {
        field: 'tables[0].name',
        message: expect.stringMatching(
          /staleness alarm description \d+ characters long, over the 1024 of AWS::CloudWatch::Alarm\.AlarmDescription/,
        ),
      },
    ])
  })

  it('takes its limits from the registry schemas vendored in test/aws/schemas', () => {
    for (const [type, limits] of Object.entries(RESOURCE_LIMITS)) {
      const file = `${type.toLowerCase().replace(/::/g, '-')}.json`
      const schema = JSON.parse(readFileSync(join(import.meta.dirname, '../aws/schemas', file), 'utf8'))
      for (const [property, limit] of Object.entries(limits)) {
        expect({ type, property, limit: schema.properties[property].maxLength }).toEqual({ type, property, limit })
      }
    }
  })
})

describe('the configuration refuses a Lambda timeout that leaves no time for work', () => {
  const timeoutOf = (timeoutSeconds: number, deadlineMarginSeconds = 60) => ({
    ...sampleWith({ deployment: { lambda: { timeoutSeconds } } }),
    export: { ...(sampleConfigInput().export as object), deadlineMarginSeconds },
  })

  it('refuses at synth a timeout no longer than the deadline margin plus the minimum work time', () => {
    expect(refusal(timeoutOf(60))).toEqual([
      {
        field: 'deployment.lambda.timeoutSeconds',
        message: `is 60 s, which leaves 0 s for tables after export.deadlineMarginSeconds (60 s); every invocation would stop before its first table. Set it to at least ${60 + MIN_WORK_SECONDS} (the margin plus ${MIN_WORK_SECONDS} s of work) or lower the margin`,
      },
    ])
    expect(refusal(timeoutOf(300, 250)).map((p) => p.field)).toEqual(['deployment.lambda.timeoutSeconds'])
  })

  it('accepts a timeout of the margin plus the minimum work time', () => {
    expect(() => parseDeployConfig(timeoutOf(60 + MIN_WORK_SECONDS))).not.toThrow()
  })

  it('refuses it at CLI start with error [CONFIG_INVALID] naming the field', async () => {
    const file = join(await tempDir(), 'config.json')
    writeFileSync(file, JSON.stringify(timeoutOf(60)))
    const result = await runCliProcess(['export', '--config', file, '--token-file', await tokenFile('t0ken')])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(
      /^error \[CONFIG_INVALID\]: invalid .*deployment\.lambda\.timeoutSeconds: is 60 s, which leaves 0 s/m,
    )
  })
})
