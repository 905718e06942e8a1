import { Match, type Template } from 'aws-cdk-lib/assertions'
import { beforeAll, describe, expect, it } from 'vitest'
import { METRICS_NAMESPACE } from '../../functions/export/core/constants.ts'
import { type AlarmDefinition, alarmDefinitions, breaches } from '../support/alarm-definitions.ts'
import { resourcesOfType, sampleConfigInput, sampleWith, synthesize } from './synth.ts'

const DAY = 86_400
const SERVICE = { service: 'inventory-export' }

const byName = (alarms: AlarmDefinition[], suffix: string): AlarmDefinition => {
  const alarm = alarms.find((a) => a.alarmName?.endsWith(suffix))
  if (!alarm) throw new Error(`no alarm named *${suffix}`)
  return alarm
}

describe('the alarms built from the sample configuration', () => {
  let template: Template
  let alarms: AlarmDefinition[]
  beforeAll(() => {
    template = synthesize(sampleConfigInput()).template
    alarms = alarmDefinitions(template.toJSON())
  })

  it("grants CloudWatch the topic key's actions AWS documents for alarms on an encrypted topic, and only where the topic lets this account's alarms publish", () => {
    // CloudWatch User Guide, "Using Amazon SNS topics with alarms": kms:Decrypt and kms:GenerateDataKey* for
    // cloudwatch.amazonaws.com. A condition CloudWatch's request does not carry would drop notifications silently.
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          {
            Sid: 'CloudWatchAlarmsPublishToTopic',
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Resource: '*',
          },
        ]),
      },
    })
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          }),
        ]),
      },
    })
  })

  it('publishes to an encrypted, TLS-only topic with the configured e-mail subscription', () => {
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^AlarmsTopicKey'), 'Arn'] },
    })
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true })
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
          }),
        ]),
      },
    })
    template.resourceCountIs('AWS::SNS::Subscription', 1)
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'platform-oncall@example.com',
    })
  })

  it('sends every alarm and its recovery to the topic, with a description that points to the runbook', () => {
    // The exporter's, the guard-held alarm, and one staleness alarm per table.
    expect(alarms).toHaveLength(7)
    for (const [, alarm] of resourcesOfType(template, 'AWS::CloudWatch::Alarm')) {
      expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^AlarmsTopic/) }])
      expect(alarm.OKActions).toEqual([{ Ref: expect.stringMatching(/^AlarmsTopic/) }])
      expect(alarm.AlarmDescription).toMatch(/Do: .*Runbook: docs\/operations\.md, section "When an alarm fires"\.$/)
      expect((alarm.AlarmDescription as string).length).toBeLessThanOrEqual(1024)
    }
  })

  it('pages on the first table an upstream change guard held, in one period, whatever the number of tables', () => {
    expect(byName(alarms, '-guard-held')).toMatchObject({
      metrics: [
        {
          namespace: METRICS_NAMESPACE,
          metricName: 'GuardHeld',
          dimensions: SERVICE,
          statistic: 'Maximum',
          periodSeconds: DAY,
        },
      ],
      threshold: 1,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
    })
    expect(byName(alarms, '-guard-held').description).toContain('"acceptChanges":true')
  })

  it('pages on 401/403 or 5xx failures that outlast retries in 2 of the last 3 daily runs', () => {
    const alarm = byName(alarms, '-persistent-source-failures')
    expect(alarm).toMatchObject({
      expression: 'MAX([auth, server])',
      periodSeconds: DAY,
      threshold: 1,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: 'notBreaching',
    })
    expect(alarm.metrics).toEqual([
      {
        id: 'auth',
        namespace: METRICS_NAMESPACE,
        metricName: 'RunsWithAuthFailures',
        dimensions: SERVICE,
        statistic: 'Maximum',
        periodSeconds: DAY,
      },
      {
        id: 'server',
        namespace: METRICS_NAMESPACE,
        metricName: 'RunsWithServerFailures',
        dimensions: SERVICE,
        statistic: 'Maximum',
        periodSeconds: DAY,
      },
    ])
  })

  it('pages when the function fails on its own side in a schedule period, not for failures of the service', () => {
    const alarm = byName(alarms, '-function-errors')
    expect(alarm).toMatchObject({
      expression: 'errors - FILL(bySource, 0)',
      periodSeconds: DAY,
      threshold: 1,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
    })
    expect(alarm.metrics).toEqual([
      expect.objectContaining({
        id: 'errors',
        namespace: 'AWS/Lambda',
        metricName: 'Errors',
        statistic: 'Sum',
        dimensions: { FunctionName: expect.stringMatching(/^<ExporterFunction/) },
      }),
      expect.objectContaining({
        id: 'bySource',
        namespace: METRICS_NAMESPACE,
        metricName: 'RunsFailedBySource',
        statistic: 'Sum',
        dimensions: SERVICE,
      }),
    ])
  })

  it('pages when the schedule could not deliver a run to the function', () => {
    const alarm = byName(alarms, '-undelivered-runs')
    expect(alarm).toMatchObject({
      periodSeconds: 300,
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
    })
    expect(alarm.expression).toBe('MAX([undelivered, dropped0])')
    expect(alarm.metrics).toEqual([
      expect.objectContaining({
        id: 'undelivered',
        namespace: 'AWS/SQS',
        metricName: 'ApproximateNumberOfMessagesVisible',
        statistic: 'Maximum',
        dimensions: { QueueName: expect.stringMatching(/^<ExporterScheduleDeadLetterQueue.*\.QueueName>$/) },
      }),
      expect.objectContaining({
        id: 'dropped0',
        namespace: 'AWS/Lambda',
        metricName: 'AsyncEventsDropped',
        statistic: 'Sum',
        dimensions: { FunctionName: expect.stringMatching(/^<ExporterFunction/) },
      }),
    ])
  })

  it('pages per table when the table had no success for two of its periods, counting silence as failure', () => {
    const alarm = byName(alarms, '-table-stale-installed_software')
    expect(alarm.alarmName).toBe('InventoryExport-table-stale-installed_software')
    expect(alarm.description).toMatch(/^Table installed_software \(saved table 1002\) had no successful export/)
    expect(alarm).toMatchObject({
      expression: undefined,
      periodSeconds: DAY,
      threshold: 1,
      comparisonOperator: 'LessThanThreshold',
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: 'breaching',
    })
    expect(alarm.metrics).toEqual([
      {
        id: 'm',
        namespace: METRICS_NAMESPACE,
        metricName: 'TablesSucceeded',
        dimensions: { ...SERVICE, table: 'installed_software' },
        statistic: 'Sum',
        periodSeconds: DAY,
      },
    ])
    expect(breaches(alarm, 0)).toBe(true)
    expect(breaches(alarm, 1)).toBe(false)
  })
})

describe('the alarms with an hourly schedule and other thresholds', () => {
  it('look at runs, not days: hourly periods, 3 of the last 5 runs, stale after 6 hours, one subscription per address', () => {
    const input = sampleWith({
      deployment: {
        ...(sampleConfigInput().deployment as object),
        schedule: { expression: 'rate(1 hour)', timeZone: 'Europe/Berlin', periodHours: 1 },
        alarms: {
          failedRunsToAlarm: 3,
          evaluationRuns: 5,
          staleAfterPeriods: 6,
          emails: ['a@example.com', 'A@example.com', 'b@example.com'],
        },
      },
    })
    const { template } = synthesize(input)
    const alarms = alarmDefinitions(template.toJSON())
    expect(byName(alarms, '-persistent-source-failures')).toMatchObject({
      periodSeconds: 3600,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    })
    expect(byName(alarms, '-table-stale-devices')).toMatchObject({
      periodSeconds: 3600,
      evaluationPeriods: 6,
      datapointsToAlarm: 6,
    })
    expect(byName(alarms, '-function-errors')).toMatchObject({ periodSeconds: 3600 })
    template.resourceCountIs('AWS::SNS::Subscription', 2)
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
    })
  })
})
