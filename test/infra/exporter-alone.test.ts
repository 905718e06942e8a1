/** The exporter construct built in a stack of its own, from its props alone (not through the export stack). */
import { App, Duration, Stack } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { Bucket } from 'aws-cdk-lib/aws-s3'
import { describe, expect, it } from 'vitest'
import { Exporter, type ExporterProps } from '../../infra/constructs/exporter.ts'
import { parseDeployConfig } from '../../infra/deployment-config.ts'
import { cdkContext, PROJECT_ROOT, SKIP_BUNDLING, sampleConfigInput, scratchDir } from './synth.ts'

describe('the exporter on its own, given only its props', () => {
  const build = (props: Partial<ExporterProps> = {}) => {
    const app = new App({ context: { ...cdkContext(), ...SKIP_BUNDLING }, outdir: scratchDir() })
    const stack = new Stack(app, 'ExporterAlone', { env: { account: '123456789012', region: 'eu-west-1' } })
    const config = parseDeployConfig(sampleConfigInput(), 'test configuration')
    const { source, tables, export: tuning, limits, warehouse, deployment } = config
    const exporter = new Exporter(stack, 'Exporter', {
      runtime: { source, tables, export: { ...tuning, concurrency: 3 }, limits, warehouse },
      tables: [
        { name: 'devices', id: '1001', expression: 'rate(1 day)', timeZone: 'UTC', periodHours: 24, memoryMb: 1769 },
        { name: 'software', id: '1002', expression: 'rate(6 hours)', timeZone: 'UTC', periodHours: 6, memoryMb: 3538 },
      ],
      lambda: { ...deployment.lambda, memoryMb: 1769 },
      flexibleWindowMinutes: 0,
      defaultPeriodHours: 24,
      secret: deployment.secret,
      createdSecretName: 'exporter-alone/token',
      bucket: Bucket.fromBucketName(stack, 'Bucket', 'warehouse-bucket'),
      projectRoot: PROJECT_ROOT,
      ...props,
    })
    // The stack places the schedules (in its nested stacks of tables); alone, they go in the same stack.
    exporter.addSchedules(stack, [
      { name: 'devices', id: '1001', expression: 'rate(1 day)', timeZone: 'UTC', periodHours: 24, memoryMb: 1769 },
      { name: 'software', id: '1002', expression: 'rate(6 hours)', timeZone: 'UTC', periodHours: 6, memoryMb: 3538 },
    ])
    return { exporter, template: Template.fromStack(stack) }
  }

  it('makes one function per memory size, their reserved concurrency summing to export.concurrency', () => {
    const { exporter, template } = build()
    expect([...exporter.functions.keys()]).toEqual([1769, 3538])
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 1769, ReservedConcurrentExecutions: 2 })
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 3538, ReservedConcurrentExecutions: 1 })
    template.hasResourceProperties('AWS::SecretsManager::Secret', { Name: 'exporter-alone/token' })
    template.resourceCountIs('AWS::Scheduler::Schedule', 2)
  })

  it('reports every problem with its own settings in one error', () => {
    expect(() => build({ scheduleRetryAttempts: 500, scheduleMaxEventAge: Duration.seconds(5) })).toThrow(
      [
        'invalid stack settings:',
        '  - scheduleMaxEventAge: must be between 60 seconds and 24 hours, got 5 s',
        '  - scheduleRetryAttempts: must be a whole number from 0 to 185, got 500',
      ].join('\n'),
    )
  })
})
