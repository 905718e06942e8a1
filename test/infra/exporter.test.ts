import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Match, type Template } from 'aws-cdk-lib/assertions'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LambdaEnvironment, METRICS_NAMESPACE } from '../../functions/export/core/constants.ts'
import { parseLambdaSettings } from '../../functions/export/core/environment.ts'
import type { ExportStack } from '../../infra/export-stack.ts'
import { resourcesOfType, sampleConfigInput, sampleWith, synthesize } from './synth.ts'

const VPC = {
  vpcId: 'vpc-0abc1234567890def',
  availabilityZones: ['eu-west-1a', 'eu-west-1b'],
  subnetIds: ['subnet-0aaaaaaaaaaaaaaaa', 'subnet-0bbbbbbbbbbbbbbbb', 'subnet-0cccccccccccccccc'],
  securityGroupIds: ['sg-0123456789abcdef0'],
}
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:inventory/api-token-AbCdEf'

describe('the exporter built from the sample configuration', () => {
  let template: Template
  let stack: ExportStack
  beforeAll(() => {
    ;({ template, stack } = synthesize(sampleConfigInput()))
  })

  it('names in its outputs what the deploy guide refers to', () => {
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual([
      'AlarmTopicArn',
      'AnalystPolicyArn',
      'AthenaWorkgroupName',
      'ExportFunctionName',
      'ExportedTables',
      'FailureQueueUrl',
      'GlueDatabaseName',
      'ScheduleGroupName',
      'TokenSecretArn',
      'WarehouseBucketName',
      'WarehousePrefix',
    ])
  })

  it('names in its outputs what npm run verify reads: the tables in configuration order and the warehouse prefix', () => {
    expect(template.findOutputs('ExportedTables').ExportedTables?.Value).toBe('devices,installed_software,users')
    expect(template.findOutputs('WarehousePrefix').WarehousePrefix?.Value).toBe('inventory')
    expect(template.findOutputs('ExportFunctionName').ExportFunctionName?.Value).toEqual({ Ref: expect.any(String) })
  })

  it('runs on Node.js 24 on arm64 with the configured memory, timeout and /tmp size', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 1769,
      Timeout: 900,
      EphemeralStorage: { Size: 2048 },
    })
  })

  it('runs at most export.concurrency invocations at once, keeps throttled ones queued for one period and sends failed ones to an encrypted queue', () => {
    template.resourceCountIs('AWS::Lambda::Function', 1)
    template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 2 })
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 21_600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ExporterFailureQueue'), 'Arn'] } },
      },
    })
    template.resourceCountIs('AWS::SQS::Queue', 2)
    for (const [, queue] of resourcesOfType(template, 'AWS::SQS::Queue')) {
      expect(queue).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 })
    }
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })],
      },
    })
  })

  it('hands the runtime sections of the configuration, the bucket, the secret and Powertools settings to the function', () => {
    const [[, fn]] = resourcesOfType(template, 'AWS::Lambda::Function') as [
      [string, { Environment: { Variables: Record<string, unknown> } }],
    ]
    const variables = fn.Environment.Variables
    expect(Object.keys(variables).sort()).toEqual(
      [
        LambdaEnvironment.EXPORT_CONFIG_FILE,
        LambdaEnvironment.WAREHOUSE_BUCKET,
        LambdaEnvironment.TOKEN_SECRET_ARN,
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
        'NODE_OPTIONS',
      ].sort(),
    )
    expect(variables[LambdaEnvironment.EXPORT_CONFIG_FILE]).toBe('export-config.json')
    const runtime = stack.exporter.runtimeConfig
    expect(Object.keys(runtime)).toEqual(['source', 'tables', 'export', 'limits', 'warehouse'])
    expect(runtime.tables.map((t: { id: string; name: string }) => `${t.id}:${t.name}`)).toEqual([
      '1001:devices',
      '1002:installed_software',
      '1003:users',
    ])
    expect(runtime.source.baseUrl).toBe('https://inventory.example.com')
    expect(variables[LambdaEnvironment.WAREHOUSE_BUCKET]).toEqual({ Ref: expect.stringMatching(/^WarehouseBucket/) })
    expect(variables[LambdaEnvironment.TOKEN_SECRET_ARN]).toEqual({
      Ref: expect.stringMatching(/^ExporterTokenSecret/),
    })
    expect(variables.POWERTOOLS_SERVICE_NAME).toBe('inventory-export')
    expect(variables.POWERTOOLS_METRICS_NAMESPACE).toBe(METRICS_NAMESPACE)
  })

  it('logs to its own log group with a retention', () => {
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 })
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^ExporterLogGroup') } },
    })
  })

  it('gives every table its own schedule in one group, invoking the function with that table alone', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1)
    template.resourceCountIs('AWS::Scheduler::Schedule', 3)
    const [[, group]] = resourcesOfType(template, 'AWS::Scheduler::ScheduleGroup') as [[string, { Name: string }]]
    for (const table of ['devices', 'installed_software', 'users']) {
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        GroupName: group.Name,
        ScheduleExpression: 'cron(0 2 * * ? *)',
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
        State: 'ENABLED',
        Target: {
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ExporterFunction'), 'Arn'] },
          Input: JSON.stringify({ tables: [table] }),
          RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: {
            Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ExporterScheduleDeadLetterQueue'), 'Arn'] },
          },
        },
      })
    }
  })

  it('creates an empty token secret whose description says what to put in it', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1)
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Description: Match.stringLikeRegexp('put-secret-value'),
      GenerateSecretString: Match.absent(),
      SecretString: Match.absent(),
    })
  })

  it('stays outside any VPC when none is configured', () => {
    template.hasResourceProperties('AWS::Lambda::Function', { VpcConfig: Match.absent() })
  })
})

describe('the exporter with an existing secret, a VPC and a private CA', () => {
  let template: Template
  let outdir: string
  const caDir = mkdtempSync(join(tmpdir(), 'inventory-ca-'))
  beforeAll(() => {
    const caFile = join(caDir, 'private-ca.pem')
    writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n')
    outdir = mkdtempSync(join(tmpdir(), 'inventory-cdk-'))
    const input = sampleWith({
      source: { caCertificatesFile: caFile },
      deployment: { ...(sampleConfigInput().deployment as object), secret: { nameOrArn: SECRET_ARN }, vpc: VPC },
    })
    template = synthesize(input, { outdir, bundle: true }).template
  })
  afterAll(() => {
    rmSync(caDir, { recursive: true, force: true })
    rmSync(outdir, { recursive: true, force: true })
  })

  it('imports the secret instead of creating one and passes its ARN', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 0)
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [LambdaEnvironment.TOKEN_SECRET_ARN]: SECRET_ARN }) },
    })
  })

  it('places the function in the configured subnets and security groups', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: { SubnetIds: VPC.subnetIds, SecurityGroupIds: VPC.securityGroupIds },
    })
    template.resourceCountIs('AWS::EC2::SecurityGroup', 0)
  })

  it('bundles the CA certificates and points the runtime and Node at the bundled copy', () => {
    const [[, fn]] = resourcesOfType(template, 'AWS::Lambda::Function') as [
      [string, { Environment: { Variables: Record<string, string> } }],
    ]
    const bundled = '/var/task/ca-certificates.pem'
    expect(fn.Environment.Variables.NODE_EXTRA_CA_CERTS).toBe(bundled)
    const assets = readdirSync(outdir).filter(
      (name) => name.startsWith('asset.') && existsSync(join(outdir, name, 'index.mjs')),
    )
    expect(assets).toHaveLength(1)
    expect(readFileSync(join(outdir, assets[0]!, 'ca-certificates.pem'), 'utf8')).toContain('MIIBtest')
    const shipped = JSON.parse(readFileSync(join(outdir, assets[0]!, 'export-config.json'), 'utf8'))
    expect(shipped.source.caCertificatesFile).toBe(bundled)
  })

  it('ships no source map, leaves source maps off by default, and runs with the export V8 flags', () => {
    const [asset] = readdirSync(outdir).filter((name) => existsSync(join(outdir, name, 'index.mjs')))
    expect(readdirSync(join(outdir, asset!)).sort()).toEqual(['ca-certificates.pem', 'export-config.json', 'index.mjs'])
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ NODE_OPTIONS: '--max-semi-space-size=4 --max-old-space-size=512' }),
      },
    })
  })
})

describe('the exporter with 200 tables and source maps switched on', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'inventory-cdk-200-'))
  let template: Template
  let assetDir: string
  beforeAll(() => {
    const input = sampleConfigInput() as {
      tables: unknown[]
      limits?: Record<string, unknown>
      deployment: { lambda: Record<string, unknown>; athena: Record<string, unknown> }
    }
    input.limits = { maxColumns: 300 }
    input.tables = Array.from({ length: 200 }, (_, i) => ({
      id: `${5000 + i}`,
      name: `inventory_table_number_${i}`,
      encoding: 'windows-1252',
      columnTypes: { serial_number: 'string', asset_tag: 'string' },
      archiveRaw: true,
    }))
    input.deployment.lambda.sourceMaps = true
    // 600 named queries would pass CloudFormation's 500 resources (the many-tables test shows the message).
    input.deployment.athena.tableQueries = false
    template = synthesize(input, { outdir, bundle: true }).template
    const [asset] = readdirSync(outdir).filter((name) => existsSync(join(outdir, name, 'index.mjs')))
    assetDir = join(outdir, asset!)
  })
  afterAll(() => rmSync(outdir, { recursive: true, force: true }))

  it('ships the configuration as a file in the bundle, which the function reads and validates', () => {
    const [[, fn]] = resourcesOfType(template, 'AWS::Lambda::Function') as [
      [string, { Environment: { Variables: Record<string, unknown> } }],
    ]
    // Far below Lambda's 4 KB for all variables together, whatever the number of tables.
    expect(JSON.stringify(fn.Environment.Variables).length).toBeLessThan(1000)
    expect(statSync(join(assetDir, 'export-config.json')).size).toBeGreaterThan(4096 * 5)
    const settings = parseLambdaSettings({
      ...(fn.Environment.Variables as Record<string, string>),
      LAMBDA_TASK_ROOT: assetDir,
      WAREHOUSE_BUCKET: 'acme-inventory-warehouse',
      TOKEN_SECRET_ARN: SECRET_ARN,
    })
    expect(settings.config.tables).toHaveLength(200)
    expect(settings.config.tables[199]).toMatchObject({ id: '5199', encoding: 'windows-1252', archiveRaw: true })
  })

  it('ships the configured limits, so the function does not run with the default ones', () => {
    const shipped = JSON.parse(readFileSync(join(assetDir, 'export-config.json'), 'utf8'))
    expect(shipped.limits).toEqual({
      maxColumns: 300,
      maxRecordBytes: 64 * 1024 * 1024,
      maxFieldBytes: 16 * 1024 * 1024,
    })
    const settings = parseLambdaSettings({
      EXPORT_CONFIG_FILE: 'export-config.json',
      LAMBDA_TASK_ROOT: assetDir,
      WAREHOUSE_BUCKET: 'acme-inventory-warehouse',
      TOKEN_SECRET_ARN: SECRET_ARN,
    })
    expect(settings.config.limits.maxColumns).toBe(300)
  })

  it('ships the source map and enables it when the configuration asks for it', () => {
    expect(readdirSync(assetDir).sort()).toEqual(['export-config.json', 'index.mjs', 'index.mjs.map'])
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          NODE_OPTIONS: '--max-semi-space-size=4 --max-old-space-size=512 --enable-source-maps',
        }),
      },
    })
  })
})

describe('the exporter with a secret and a bucket encrypted by customer managed keys', () => {
  const SECRET_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'
  const BUCKET_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/9876fedc-98fe-76dc-54ba-0987654321fe'
  it('may decrypt the secret with its key, and encrypt and decrypt warehouse objects with the bucket key', () => {
    const input = sampleWith({
      deployment: {
        ...(sampleConfigInput().deployment as object),
        secret: { nameOrArn: SECRET_ARN, kmsKeyArn: SECRET_KEY },
        bucket: { name: 'acme-data-lake', kmsKeyArn: BUCKET_KEY },
      },
    })
    const { template } = synthesize(input)
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          { Sid: 'DecryptTokenSecret', Effect: 'Allow', Action: 'kms:Decrypt', Resource: SECRET_KEY },
          {
            Sid: 'EncryptWarehouseObjects',
            Effect: 'Allow',
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
            Resource: BUCKET_KEY,
          },
        ]),
      },
    })
  })

  it('grants no KMS rights when no key is configured', () => {
    const { template } = synthesize(sampleWith({}))
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: { Sid?: string }[] } } }).Properties.PolicyDocument
          .Statement,
    )
    expect(statements.filter((s) => s.Sid === 'DecryptTokenSecret' || s.Sid === 'EncryptWarehouseObjects')).toEqual([])
  })
})

describe('the exporter with a secret imported by name', () => {
  it('reads the secret through its name-based ARN', () => {
    const input = sampleWith({
      deployment: { ...(sampleConfigInput().deployment as object), secret: { nameOrArn: 'inventory/api-token' } },
    })
    const { template } = synthesize(input)
    template.resourceCountIs('AWS::SecretsManager::Secret', 0)
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'secretsmanager:GetSecretValue',
            Resource: { 'Fn::Join': ['', Match.arrayWith([':secret:inventory/api-token-??????'])] },
          }),
        ]),
      },
    })
  })
})
