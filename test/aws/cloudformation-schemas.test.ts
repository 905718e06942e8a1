import { beforeAll, describe, expect, it } from 'vitest'
import { sampleConfigInput, synthesize } from '../infra/synth.ts'
import { registrySchemaViolations, vendoredTypes } from './cloudformation-schemas.ts'
import { everyOptionInput } from './every-option.ts'

type TemplateJson = Record<string, unknown> & {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>
}

const templates: Record<string, { json: TemplateJson; stackName: string }> = {}

beforeAll(() => {
  for (const [label, input] of [
    ['the sample configuration', sampleConfigInput()],
    ['a configuration using every option', everyOptionInput()],
  ] as const) {
    const { template, stack } = synthesize(input)
    templates[label] = { json: template.toJSON() as TemplateJson, stackName: stack.stackName }
  }
}, 120_000)

describe("CloudFormation's registry schemas", () => {
  it.each(['the sample configuration', 'a configuration using every option'])(
    'accept every resource of the template synthesized from %s',
    (label) => {
      const { json, stackName } = templates[label]!
      expect(registrySchemaViolations(json, stackName)).toEqual([])
    },
  )

  it('are vendored for exactly the resource types the templates use', () => {
    const used = new Set(
      Object.values(templates).flatMap(({ json }) => Object.values(json.Resources).map((r) => r.Type)),
    )
    expect(vendoredTypes()).toEqual([...used].sort())
  })

  it('refuse a named query name of 129 characters and an alarm name built past 255 from the stack name', () => {
    const { json, stackName } = templates['the sample configuration']!
    const broken = structuredClone(json)
    const [queryId] = Object.entries(broken.Resources).find(([, r]) => r.Type === 'AWS::Athena::NamedQuery')!
    broken.Resources[queryId]!.Properties!.Name = 'q'.repeat(129)
    const [alarmId] = Object.entries(broken.Resources).find(([, r]) => r.Type === 'AWS::CloudWatch::Alarm')!
    broken.Resources[alarmId]!.Properties!.AlarmName = {
      'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, 'a'.repeat(250)]],
    }
    expect(registrySchemaViolations(broken, stackName)).toEqual([
      expect.objectContaining({ resource: queryId, path: '/Name', message: expect.stringContaining('128') }),
      expect.objectContaining({ resource: alarmId, path: '/AlarmName', message: expect.stringContaining('255') }),
    ])
  })
})
