import { describe, expect, it } from 'vitest'
import { alarmDefinitions, breaches, flattenValue } from '../support/alarm-definitions.ts'

const template = {
  Resources: {
    Topic: { Type: 'AWS::SNS::Topic', Properties: {} },
    Errors: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        AlarmName: 'x-errors',
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'Fn123' } }],
        Statistic: 'Sum',
        Period: 3600,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 2,
      },
    },
  },
}

describe('alarm definitions', () => {
  it('read single-metric alarms, defaulting datapoints to alarm and missing data as CloudWatch does', () => {
    expect(alarmDefinitions(template)).toEqual([
      {
        logicalId: 'Errors',
        alarmName: 'x-errors',
        description: '',
        expression: undefined,
        metrics: [
          {
            id: 'm',
            namespace: 'AWS/Lambda',
            metricName: 'Errors',
            dimensions: { FunctionName: '<Fn123>' },
            statistic: 'Sum',
            periodSeconds: 3600,
          },
        ],
        periodSeconds: 3600,
        threshold: 1,
        comparisonOperator: 'GreaterThanOrEqualToThreshold',
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        treatMissingData: 'missing',
      },
    ])
  })

  it('return nothing for a template without alarms', () => {
    expect(alarmDefinitions({ Resources: {} })).toEqual([])
    expect(alarmDefinitions(undefined)).toEqual([])
  })

  it('flatten references the way cdk-nag spells them', () => {
    expect(flattenValue({ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Bucket', 'Arn'] }, '/inventory/*']] })).toBe(
      '<Bucket.Arn>/inventory/*',
    )
    expect(flattenValue({ Ref: 'AWS::Region' })).toBe('<AWS::Region>')
  })

  it.each([
    ['GreaterThanOrEqualToThreshold', 1, true],
    ['GreaterThanOrEqualToThreshold', 0, false],
    ['GreaterThanThreshold', 1, false],
    ['LessThanThreshold', 0, true],
    ['LessThanOrEqualToThreshold', 1, true],
  ] as const)('compare with %s: %d breaches a threshold of 1 is %s', (comparisonOperator, value, expected) => {
    expect(breaches({ comparisonOperator, threshold: 1 }, value)).toBe(expected)
  })
})
