import { readFileSync } from 'node:fs'
import path from 'node:path'
import { App, Stack } from 'aws-cdk-lib'
import { Annotations, Match } from 'aws-cdk-lib/assertions'
import { Queue } from 'aws-cdk-lib/aws-sqs'
import { AwsSolutionsChecks } from 'cdk-nag'
import { beforeAll, describe, expect, it } from 'vitest'
import { addExportStack } from '../../infra/app.ts'
import { listNagAcknowledgements, MIN_ACKNOWLEDGEMENT_REASON_LENGTH } from '../../infra/nag.ts'
import { cdkContext, SKIP_BUNDLING, sampleConfigInput, sampleWith, scratchDir, synthesize } from './synth.ts'

const findings = (scope: App) =>
  new AwsSolutionsChecks()
    .validateScope(scope)
    .violations.map(
      (v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    )

describe('cdk-nag AwsSolutions checks', () => {
  let app: App
  let stack: Stack
  beforeAll(() => {
    app = new App({
      context: { ...cdkContext(), ...SKIP_BUNDLING, config: 'config/sample.json' },
      outdir: scratchDir(),
    })
    stack = addExportStack(app).stack
    app.synth()
  })

  it('find no unacknowledged error or warning in the stack the app builds from the sample', () => {
    expect(findings(app)).toEqual([])
  })

  it('leave no unacknowledged CDK warning or error on the stack', () => {
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([])
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([])
  })

  it('find nothing either with an existing bucket, an imported secret, their KMS keys, a VPC and history operations', () => {
    const input = sampleWith({
      deployment: {
        ...(sampleConfigInput().deployment as object),
        bucket: {
          name: 'acme-data-lake',
          kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/9876fedc-98fe-76dc-54ba-0987654321fe',
        },
        secret: {
          nameOrArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:inventory/api-token-AbCdEf',
          kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
        },
        vpc: {
          vpcId: 'vpc-0abc1234567890def',
          availabilityZones: ['eu-west-1a', 'eu-west-1b'],
          subnetIds: ['subnet-0aaaaaaaaaaaaaaaa', 'subnet-0bbbbbbbbbbbbbbbb'],
          securityGroupIds: ['sg-0123456789abcdef0'],
        },
        historyOperations: { enabled: true },
      },
    })
    const variant = synthesize(input)
    expect(findings(variant.app)).toEqual([])
    expect(Annotations.fromStack(variant.stack).findWarning('*', Match.anyValue())).toEqual([])
  })

  it('acknowledge each finding with a specific reason', () => {
    const acknowledgements = listNagAcknowledgements(app)
    expect(acknowledgements.length).toBeGreaterThan(0)
    for (const { id, reason } of acknowledgements) {
      expect(id).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$|^@aws-cdk\//)
      expect(reason.length, `reason of ${id}`).toBeGreaterThanOrEqual(MIN_ACKNOWLEDGEMENT_REASON_LENGTH)
    }
    expect(new Set(acknowledgements.map((a) => a.reason)).size).toBe(acknowledgements.length)
  })

  it("fail the app's own synth (the validation plugin) on a finding, as cdk synth does", () => {
    const probe = new App({
      context: { ...cdkContext(), ...SKIP_BUNDLING, config: 'config/sample.json' },
      outdir: scratchDir(),
    })
    const { stack: probeStack } = addExportStack(probe)
    new Queue(probeStack, 'UnencryptedQueue', { enforceSSL: false })
    const before = process.exitCode
    try {
      const assembly = probe.synth()
      // The CLI's exit status: CDK sets it when a validation report fails.
      expect(process.exitCode).toBe(1)
      const report = readFileSync(path.join(assembly.directory, 'policy-validation-report.json'), 'utf8')
      expect(report).toContain('AwsSolutions-SQS3')
      expect(report).not.toContain('NagPack requires a construct tree')
    } finally {
      process.exitCode = before
    }
  })

  it('do report an unencrypted queue without a dead-letter queue, so a clean result means something', () => {
    const probe = new App({ outdir: scratchDir() })
    new Queue(new Stack(probe, 'Probe'), 'Queue', { enforceSSL: false })
    expect(findings(probe)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error AwsSolutions-SQS3 /),
        expect.stringMatching(/^error AwsSolutions-SQS4 /),
      ]),
    )
  })
})
