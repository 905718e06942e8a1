import type { Template } from 'aws-cdk-lib/assertions'
import { beforeAll, describe, expect, it } from 'vitest'
import { flattenValue } from '../support/alarm-definitions.ts'
import { resourcesOfType, sampleConfigInput, sampleWith, synthesize } from './synth.ts'

type Statement = {
  Effect: string
  Action: string | string[]
  Resource?: unknown
  Principal?: unknown
  Condition?: unknown
  Sid?: string
}

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

/** Every policy statement of the template, with where it lives. */
const allStatements = (template: Template): { where: string; statement: Statement }[] => {
  const documents: [string, unknown][] = [
    ...resourcesOfType(template, 'AWS::IAM::Policy').map(([id, p]): [string, unknown] => [id, p.PolicyDocument]),
    ...resourcesOfType(template, 'AWS::IAM::Role').flatMap(([id, role]): [string, unknown][] => [
      [id, role.AssumeRolePolicyDocument],
      ...list(role.Policies as { PolicyDocument: unknown }[]).map((p): [string, unknown] => [id, p.PolicyDocument]),
    ]),
    ...resourcesOfType(template, 'AWS::IAM::ManagedPolicy').map(([id, p]): [string, unknown] => [id, p.PolicyDocument]),
    ...resourcesOfType(template, 'AWS::S3::BucketPolicy').map(([id, p]): [string, unknown] => [id, p.PolicyDocument]),
    ...resourcesOfType(template, 'AWS::SQS::QueuePolicy').map(([id, p]): [string, unknown] => [id, p.PolicyDocument]),
    ...resourcesOfType(template, 'AWS::SNS::TopicPolicy').map(([id, p]): [string, unknown] => [id, p.PolicyDocument]),
    ...resourcesOfType(template, 'AWS::KMS::Key').map(([id, k]): [string, unknown] => [id, k.KeyPolicy]),
  ]
  return documents.flatMap(([where, document]) =>
    list((document as { Statement: Statement[] }).Statement).map((statement) => ({ where, statement })),
  )
}

const isAccountRoot = (principal: unknown): boolean =>
  /:root$/.test(flattenValue((principal as { AWS?: unknown })?.AWS))

const exporterStatements = (template: Template): Statement[] =>
  resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([id]) => id.startsWith('ExporterRoleDefaultPolicy'))
    .flatMap(([, p]) => (p.PolicyDocument as { Statement: Statement[] }).Statement)

describe.each([
  ['the sample configuration', sampleConfigInput()],
  [
    'an existing bucket, secret and VPC',
    sampleWith({
      deployment: {
        ...(sampleConfigInput().deployment as object),
        bucket: { name: 'acme-data-lake' },
        secret: { nameOrArn: 'inventory/api-token' },
        vpc: {
          vpcId: 'vpc-0abc1234567890def',
          availabilityZones: ['eu-west-1a'],
          subnetIds: ['subnet-0aaaaaaaaaaaaaaaa'],
          securityGroupIds: ['sg-0123456789abcdef0'],
        },
      },
    }),
  ],
])('permissions with %s', (_label, input) => {
  let template: Template
  beforeAll(() => {
    template = synthesize(input).template
  })

  it("allow no wildcard action anywhere but the key administration of the account root and CloudWatch's documented data keys", () => {
    const wildcards = allStatements(template)
      .filter(({ statement }) => statement.Effect === 'Allow')
      .flatMap(({ where, statement }) =>
        list(statement.Action)
          .filter((a) => a.includes('*'))
          .map((action) => ({ where, action, statement })),
      )
    expect(wildcards.map(({ where, action }) => `${where}: ${action}`)).toEqual([
      expect.stringMatching(/^AlarmsTopicKey.*: kms:\*$/),
      expect.stringMatching(/^AlarmsTopicKey.*: kms:GenerateDataKey\*$/),
    ])
    expect(isAccountRoot(wildcards[0]?.statement.Principal)).toBe(true)
    // kms:GenerateDataKey* is the action AWS's policy for alarms on an encrypted topic names (alarms.ts).
    expect(wildcards[1]?.statement.Principal).toEqual({ Service: 'cloudwatch.amazonaws.com' })
  })

  it("grant the function none of the actions it never sends, CDK's grant companions included", () => {
    const granted = exporterStatements(template).flatMap((s) => list(s.Action))
    const unused = [
      'glue:GetDatabase',
      's3:ListMultipartUploadParts',
      'secretsmanager:DescribeSecret',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
    ]
    expect(granted.filter((action) => unused.includes(action))).toEqual([])
    expect(exporterStatements(template).find((s) => s.Sid === 'SendFailedInvocations')?.Action).toBe('sqs:SendMessage')
  })

  it('scope object access to the warehouse prefix and listing to that prefix', () => {
    const statements = exporterStatements(template).filter((s) => list(s.Action).some((a) => a.startsWith('s3:')))
    const objects = statements.find((s) => s.Sid === 'WarehouseObjectsUnderPrefix')
    expect(list(objects?.Action).sort()).toEqual(['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'])
    expect(flattenValue(objects?.Resource)).toMatch(/\/inventory\/\*$/)
    const listing = statements.find((s) => s.Sid === 'ListWarehousePrefix')
    expect(listing?.Action).toBe('s3:ListBucket')
    expect(listing?.Condition).toEqual({ StringLike: { 's3:prefix': ['inventory', 'inventory/*'] } })
    expect(statements).toHaveLength(2)
  })

  it('let the function, and nothing else, read the token secret', () => {
    const readers = allStatements(template).filter(({ statement }) =>
      list(statement.Action).some((a) => a.startsWith('secretsmanager:')),
    )
    expect(readers.map(({ where }) => where)).toEqual([expect.stringMatching(/^ExporterRoleDefaultPolicy/)])
    const statement = readers[0]!.statement
    // GetSecretValue alone: CDK's grantRead would add DescribeSecret, which the function never sends.
    expect(list(statement.Action)).toEqual(['secretsmanager:GetSecretValue'])
    expect(list(statement.Resource)).toHaveLength(1)
    expect(flattenValue(statement.Resource)).toMatch(
      /^<ExporterTokenSecret[0-9A-F]+>$|:secret:inventory\/api-token-\?{6}$/,
    )
  })

  it('scope Glue rights to the catalog, the database and its tables', () => {
    const glue = exporterStatements(template).find((s) => s.Sid === 'GlueCatalogOfWarehouse')
    expect(list(glue?.Action).sort()).toEqual(['glue:CreateTable', 'glue:GetTable', 'glue:UpdateTable'])
    const arn = 'arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>'
    expect(list(glue?.Resource).map(flattenValue)).toEqual([
      `${arn}:catalog`,
      `${arn}:database/inventory`,
      `${arn}:table/inventory/*`,
    ])
  })
})

describe('the analyst policy', () => {
  it('lets an analyst use the workgroup, read the catalog and the data prefix, and write query results, nothing more', () => {
    const { template } = synthesize(sampleConfigInput())
    const [[, policy]] = resourcesOfType(template, 'AWS::IAM::ManagedPolicy') as [
      [string, { PolicyDocument: { Statement: Statement[] } }],
    ]
    const statements = policy.PolicyDocument.Statement.map((s) => ({
      sid: s.Sid,
      actions: list(s.Action).sort(),
      resources: list(s.Resource).map((r) => flattenValue(r)),
    }))
    expect(statements.map((s) => s.sid)).toEqual([
      'QueryInWorkgroup',
      'ReadWarehouseCatalog',
      'ReadWarehouseData',
      'WriteQueryResults',
      'ListWarehouseAndResults',
    ])
    const bySid = Object.fromEntries(statements.map((s) => [s.sid, s]))
    expect(bySid.QueryInWorkgroup!.resources).toEqual([expect.stringMatching(/:workgroup\/inventory$/)])
    expect(bySid.ReadWarehouseData).toMatchObject({
      actions: ['s3:GetObject'],
      resources: [expect.stringMatching(/\/inventory\/\*$/)],
    })
    expect(bySid.WriteQueryResults!.resources).toEqual([expect.stringMatching(/\/athena-results\/\*$/)])
    expect(bySid.ReadWarehouseCatalog!.actions.every((a: string) => /^glue:Get/.test(a))).toBe(true)
    expect(statements.flatMap((s) => s.actions).filter((a: string) => /Delete|Create|Update|\*/.test(a))).toEqual([])
    expect(Object.keys(template.findOutputs('AnalystPolicyArn'))).toEqual(['AnalystPolicyArn'])
  })
})
