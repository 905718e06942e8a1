/**
 * The history operations' state machine (infra/constructs/history-operations.ts) as synthesized: made only when
 * `deployment.historyOperations.enabled`, its plan and batch tasks invoking the history function (a memory and a
 * reserved concurrency of its own), its Map bounded by maxConcurrency (inline, or distributed from
 * distributedFromDates dates on), its finish after the Map with the request, `"finish": true` and the plan's lease,
 * its logs errors only without execution data, its role invoking nothing else.
 */
import { Match } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { resourcesOfType, sampleWith, synthesize } from './synth.ts'

type Json = Record<string, unknown>

const enabled = (extra: Json = {}) =>
  synthesize(sampleWith({ deployment: { historyOperations: { enabled: true, ...extra } } }))

/** The state machine's definition as Step Functions reads it, with the function's ARN as the token `FUNCTION`. */
const definitionOf = (properties: Json, functionId: string): Json => {
  const parts = (properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part
      const att = (part as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt']
      return att?.[0] === functionId && att[1] === 'Arn' ? 'FUNCTION' : JSON.stringify(part)
    })
    .join('')
  return JSON.parse(text) as Json
}

describe('the history operations state machine', () => {
  it('is not made unless deployment.historyOperations.enabled', () => {
    const { template } = synthesize(sampleWith({}))
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 0)
    expect(Object.keys(template.toJSON().Outputs)).not.toContain('HistoryStateMachineArn')
  })

  it('plans with the history function, then runs each batch on it in a Map of maxConcurrency, inline or distributed', () => {
    const { template, stack } = enabled({ maxConcurrency: 3, distributedFromDates: 50, memoryMb: 3008 })
    const [[, properties]] = resourcesOfType(template, 'AWS::StepFunctions::StateMachine') as [[string, Json]]
    const functionId = stack.getLogicalId(stack.exporter.historyFunction!.node.defaultChild as never)
    const definition = definitionOf(properties, functionId) as {
      StartAt: string
      States: Record<string, Json>
    }
    expect(definition.StartAt).toBe('Plan')
    expect(definition.States.Plan).toMatchObject({ Type: 'Task', Resource: 'FUNCTION', Next: 'HowMany' })
    expect(definition.States.HowMany).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.plan.dates', NumericGreaterThanEquals: 50, Next: 'ManyBatches' }],
      Default: 'Batches',
    })
    const selector = {
      'history.$': '$$.Execution.Input.history',
      'dates.$': '$$.Map.Item.Value',
      'lease.$': '$.plan.lease',
    }
    for (const [name, batchName, mode] of [
      ['Batches', 'Batch', undefined],
      ['ManyBatches', 'DistributedBatch', { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }],
    ] as const) {
      const map = definition.States[name] as {
        ItemSelector: Json
        ItemProcessor: { ProcessorConfig?: Json; States: Record<string, Json> }
      }
      expect(map).toMatchObject({ Type: 'Map', MaxConcurrency: 3, ItemsPath: '$.plan.batches', Next: 'Finish' })
      expect(map.ItemSelector).toEqual(selector)
      if (mode) expect(map.ItemProcessor.ProcessorConfig).toEqual(mode)
      const batch = map.ItemProcessor.States[batchName] as { Resource: string; Retry: Json[]; Catch: Json[] }
      expect(batch.Resource).toBe('FUNCTION')
      expect(batch.Retry.map((r) => r.ErrorEquals)).toEqual([
        expect.arrayContaining(['Lambda.ServiceException', 'Lambda.SdkClientException']),
        ['Lambda.TooManyRequestsException'],
        ['HistoryBatchIncompleteError'],
      ])
      expect(batch.Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: `${batchName}Failed` },
      ])
      expect(map.ItemProcessor.States[`${batchName}Failed`]).toMatchObject({
        Type: 'Fail',
        ErrorPath: '$.failure.Error',
      })
    }
    const finish = definition.States.Finish as { Retry: Json[]; Catch: Json[] }
    expect(finish).toMatchObject({
      Type: 'Task',
      Resource: 'FUNCTION',
      End: true,
      Parameters: { 'history.$': '$$.Execution.Input.history', finish: true, 'lease.$': '$.plan.lease' },
      ResultPath: '$.finish',
    })
    expect(finish.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'FinishFailed' }])
    expect(definition.States.FinishFailed).toMatchObject({ Type: 'Fail', ErrorPath: '$.failure.Error' })
    template.hasOutput('HistoryStateMachineArn', { Value: { Ref: Match.stringLikeRegexp('HistoryOperations') } })
    // The batches run on a function of their own: its memory, its reserved concurrency, off the schedules' slots.
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 3008,
      ReservedConcurrentExecutions: 3,
      Description: Match.stringLikeRegexp('^Erasure requests and rewrites'),
    })
  })

  it('logs errors only, without execution data', () => {
    const { template } = enabled()
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: false },
    })
  })

  it('may invoke the history function and nothing else, and start only its own child executions', () => {
    const { template, stack } = enabled()
    const functionId = stack.getLogicalId(stack.exporter.historyFunction!.node.defaultChild as never)
    const policies = resourcesOfType(template, 'AWS::IAM::Policy').filter(([id]) => id.startsWith('HistoryOperations'))
    const statements = policies.flatMap(([, p]) => (p.PolicyDocument as { Statement: Json[] }).Statement)
    const invoke = statements.filter((s) => [s.Action].flat().includes('lambda:InvokeFunction'))
    expect(invoke).toHaveLength(1)
    expect(JSON.stringify(invoke[0]!.Resource)).toContain(functionId)
    const others = statements.flatMap((s) => [s.Action].flat() as string[]).filter((a) => !a.startsWith('logs:'))
    expect([...new Set(others)].sort()).toEqual([
      'lambda:InvokeFunction',
      'states:DescribeExecution',
      'states:RedriveExecution',
      'states:StartExecution',
      'states:StopExecution',
    ])
    // The Distributed Map starts executions of this state machine only, and acts on its executions only.
    const start = statements.find((s) => [s.Action].flat().includes('states:StartExecution'))!
    expect(JSON.stringify(start.Resource)).toMatch(/"Ref":"HistoryOperationsStateMachine/)
  })

  it("makes the key's secret and lets the function delete only archiving tables' raw bodies", () => {
    const input = sampleWith({ deployment: { historyOperations: { enabled: true } } })
    const tables = input.tables as Json[]
    input.tables = tables.map((t) => (t.name === 'devices' ? { ...t, archiveRaw: true } : t))
    const { template } = synthesize(input)
    template.resourceCountIs('AWS::SecretsManager::Secret', 2)
    const statements = resourcesOfType(template, 'AWS::IAM::Policy')
      .filter(([id]) => id.startsWith('ExporterRole'))
      .flatMap(([, p]) => (p.PolicyDocument as { Statement: Json[] }).Statement)
      .filter((s) => s.Sid === 'EraseRawBodies')
    expect(statements).toEqual([
      {
        Sid: 'EraseRawBodies',
        Effect: 'Allow',
        Action: 's3:DeleteObject',
        Resource: { 'Fn::Join': ['', [expect.anything(), '/inventory/_raw/devices/dt=*']] },
      },
    ])
  })

  it('grants no DeleteObject without history operations or retention', () => {
    const { template } = synthesize(sampleWith({}))
    expect(JSON.stringify(template.toJSON())).not.toContain('s3:DeleteObject')
  })
})
