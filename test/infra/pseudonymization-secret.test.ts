import { Match, type Template } from 'aws-cdk-lib/assertions'
import { beforeAll, describe, expect, it } from 'vitest'
import { LambdaEnvironment } from '../../functions/export/core/constants.ts'
import { flattenValue } from '../support/alarm-definitions.ts'
import { resourcesOfType, sampleConfigInput, synthesize } from './synth.ts'

type Statement = { Action: string | string[]; Resource?: unknown }
const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

/** The sample with its users table pseudonymizing e-mails, and `deployment` merged in. */
const withPseudonymizedUsers = (deployment: Record<string, unknown> = {}) => {
  const input = sampleConfigInput()
  input.tables = [
    { id: '1001', name: 'devices' },
    { id: '1003', name: 'users', columns: { drop: ['display_name'], pseudonymize: ['e_mail'] } },
  ]
  input.deployment = { ...(input.deployment as object), ...deployment }
  return input
}

/** Every secretsmanager statement of every IAM policy, with the policy's logical id. */
const secretStatements = (template: Template) =>
  [...resourcesOfType(template, 'AWS::IAM::Policy'), ...resourcesOfType(template, 'AWS::IAM::ManagedPolicy')].flatMap(
    ([id, p]) =>
      (p.PolicyDocument as { Statement: Statement[] }).Statement.filter((s) =>
        list(s.Action).some((a) => a.startsWith('secretsmanager:')),
      ).map((statement) => ({ id, statement })),
  )

const functionVariables = (template: Template) =>
  resourcesOfType(template, 'AWS::Lambda::Function').map(
    ([, fn]) => (fn.Environment as { Variables: Record<string, unknown> }).Variables,
  )

describe('the pseudonymization key secret', () => {
  let template: Template
  beforeAll(() => {
    ;({ template } = synthesize(withPseudonymizedUsers()))
  })

  it('is created with a random 64-character value, kept when the stack is deleted, when a table pseudonymizes', () => {
    template.hasResource('AWS::SecretsManager::Secret', {
      Properties: {
        Name: 'InventoryExport/inventory-pseudonymization-key',
        GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
      },
      DeletionPolicy: 'Retain',
    })
    expect(Object.keys(template.findOutputs('PseudonymizationSecretArn'))).toEqual(['PseudonymizationSecretArn'])
  })

  it('is named to the function by PSEUDONYMIZATION_SECRET_ARN', () => {
    for (const variables of functionVariables(template)) {
      expect(flattenValue(variables[LambdaEnvironment.PSEUDONYMIZATION_SECRET_ARN])).toMatch(/PseudonymizationSecret/)
    }
  })

  it('may be read by the function with GetSecretValue only, and by no other policy', () => {
    const onKey = secretStatements(template).filter(({ statement }) =>
      /PseudonymizationSecret/.test(flattenValue(statement.Resource)),
    )
    expect(onKey.map(({ id }) => id)).toEqual([expect.stringMatching(/^ExporterRoleDefaultPolicy/)])
    expect(list(onKey[0]!.statement.Action)).toEqual(['secretsmanager:GetSecretValue'])
    expect(list(onKey[0]!.statement.Resource)).toHaveLength(1)
  })

  it('tells analysts in their policy that pseudonyms join but cannot be reversed', () => {
    template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      Description: Match.stringLikeRegexp('join across tables and dates but cannot be reversed'),
    })
  })

  it('is imported by name when deployment names one, with GetSecretValue on its ARN and any suffix', () => {
    const { template: imported } = synthesize(
      withPseudonymizedUsers({ pseudonymizationSecret: { nameOrArn: 'platform/pseudonymization-key' } }),
    )
    expect(resourcesOfType(imported, 'AWS::SecretsManager::Secret')).toHaveLength(1)
    const onKey = secretStatements(imported).filter(({ statement }) =>
      /platform\/pseudonymization-key/.test(flattenValue(statement.Resource)),
    )
    expect(onKey).toHaveLength(1)
    expect(flattenValue(onKey[0]!.statement.Resource)).toMatch(/:secret:platform\/pseudonymization-key-\?{6}$/)
  })

  it('does not exist when no table pseudonymizes', () => {
    const { template: plain } = synthesize(sampleConfigInput())
    expect(resourcesOfType(plain, 'AWS::SecretsManager::Secret')).toHaveLength(1)
    for (const variables of functionVariables(plain)) {
      expect(variables[LambdaEnvironment.PSEUDONYMIZATION_SECRET_ARN]).toBeUndefined()
    }
  })
})
