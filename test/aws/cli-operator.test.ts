/**
 * The CLI against the deployed bucket, offline: `npm start --stack` / `--out s3://... --glue-database` in a child
 * process, against the stand-ins that decide as AWS does (harness.ts), with the operator policy exactly as
 * docs/operations.md prints it. Every request must be allowed, and the policy must grant nothing the CLI never sends.
 */
import { readFile, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCliProcess, tempDir } from '../support/cli.ts'
import { type AwsHarness, startAwsHarness } from './harness.ts'
import type { Authorizer } from './iam.ts'
import { grantedActions, type IdentityPolicy, LOCAL_ACCOUNT, LOCAL_REGION } from './role-policy.ts'

const BUCKET = 'inventory-warehouse-operator'
const PREFIX = 'inventory'
const DATABASE = 'inventory'
const STACK = 'InventoryExport'
const STACK_ARN = `arn:aws:cloudformation:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stack/${STACK}/0f7e6d5c-4b3a-2910-8f7e-6d5c4b3a2910`
const DOCS = path.resolve(import.meta.dirname, '../../docs/operations.md')

/**
 * Sent only when an upload fails or is cancelled (publish/s3.ts; test/integration/s3-store.test.ts asks s3rver for
 * uploads left). The second date of the test updates the Glue tables the first created, so glue:UpdateTable is sent.
 */
const SENT_ON_OTHER_PATHS = ['s3:AbortMultipartUpload']

/** The JSON policy of docs/operations.md's section on the CLI against the bucket, its placeholders filled. */
const documentedPolicy = async (): Promise<IdentityPolicy> => {
  const docs = await readFile(DOCS, 'utf8')
  const section = docs.slice(docs.indexOf('## Running the CLI against the deployed bucket'))
  const json = /```json\n([\s\S]*?)\n```/.exec(section)?.[1]
  if (json === undefined) throw new Error('docs/operations.md has no operator policy')
  const filled = json
    .replaceAll('BUCKET', BUCKET)
    .replaceAll('PREFIX', PREFIX)
    .replaceAll('REGION', LOCAL_REGION)
    .replaceAll('ACCOUNT', LOCAL_ACCOUNT)
    .replaceAll('DATABASE', DATABASE)
    .replaceAll('STACK', STACK)
  return { name: 'OperatorPolicy', policy: JSON.parse(filled) as IdentityPolicy['policy'] }
}

/** CloudFormation's DescribeStacks (AWS query protocol), decided by IAM, for the one stack there is. */
const startCloudFormation = async (authorizer: Authorizer) => {
  const outputs = { WarehouseBucketName: BUCKET, WarehousePrefix: PREFIX, GlueDatabaseName: DATABASE }
  const error = (status: number, code: string, message: string) =>
    [
      status,
      `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error></ErrorResponse>`,
    ] as const
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const stackName = new URLSearchParams(Buffer.concat(chunks).toString()).get('StackName') ?? ''
    const arn =
      stackName === STACK ? STACK_ARN : `arn:aws:cloudformation:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stack/${stackName}/*`
    const decision = await authorizer.decide({ action: 'cloudformation:DescribeStacks', resource: arn })
    const refused = decision.allowed ? undefined : error(403, 'AccessDenied', 'not authorized')
    if (refused !== undefined) {
      res.writeHead(refused[0], { 'content-type': 'text/xml' })
      res.end(refused[1])
      return
    }
    res.writeHead(200, { 'content-type': 'text/xml' })
    const members = Object.entries(outputs)
      .map(([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`)
      .join('')
    res.end(
      `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackId>${STACK_ARN}</StackId><StackName>${STACK}</StackName><StackStatus>UPDATE_COMPLETE</StackStatus><CreationTime>2026-01-01T00:00:00Z</CreationTime><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

let work: string
let policy: IdentityPolicy
beforeAll(async () => {
  work = await tempDir('cli-operator-')
  policy = await documentedPolicy()
})
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

/** A harness deciding with `policies`, CloudFormation beside it, and the CLI's environment for both. */
const withHarness = async (
  policies: readonly IdentityPolicy[],
  run: (aws: AwsHarness, env: NodeJS.ProcessEnv) => Promise<void>,
) => {
  const aws = await startAwsHarness({ policies, names: { bucket: BUCKET, secretArn: 'unused' }, secretValue: '{}' })
  const cloudFormation = await startCloudFormation(aws.authorizer)
  try {
    await run(aws, {
      ...aws.sdkEnvironment,
      AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
      AWS_CONFIG_FILE: path.join(work, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'no-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_PROFILE: '',
    })
  } finally {
    await cloudFormation.close()
    await aws.close()
  }
}

describe('the CLI with the documented operator policy, against stand-ins that decide as AWS does', () => {
  it('exports to the stack and to an s3:// --out with Glue, every request allowed, every grant used', async () => {
    await withHarness([policy], async (aws, env) => {
      const byStack = await runCliProcess(['export', '--demo', '--stack', STACK, '--date', '2026-05-03'], env)
      expect(byStack.stderr).not.toMatch(/error \[/)
      expect(byStack.exitCode).toBe(0)
      const byUrl = await runCliProcess(
        ['export', '--demo', '--out', `s3://${BUCKET}/${PREFIX}`, '--glue-database', DATABASE, '--date', '2026-05-04'],
        env,
      )
      expect(byUrl.stderr).not.toMatch(/error \[|warning/)
      expect(byUrl.exitCode).toBe(0)

      expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
      // A missing key's 403 (the operator may list only the prefix) is told from a denial by the store's listing.
      expect(aws.authorizer.refusals.every((r) => r.action === 's3:GetObject')).toBe(true)
      expect(await aws.s3.read(`${PREFIX}/devices/dt=2026-05-04/data.parquet`)).toBeDefined()
      expect([...aws.json.glueTables.keys()]).toContain(`${DATABASE}.devices`)
      expect([...aws.json.glueTables.keys()]).toContain(`${DATABASE}.devices_latest`)

      const sent = aws.authorizer.actionsSent()
      const granted = grantedActions([policy])
      expect(sent.filter((action) => !granted.includes(action))).toEqual([])
      expect(granted.filter((action) => !sent.includes(action))).toEqual(SENT_ON_OTHER_PATHS)
    })
  }, 180_000)

  it('ends a policy without the listing with one coded line naming the permissions needed', async () => {
    const withoutList = {
      ...policy,
      policy: { ...policy.policy, Statement: policy.policy.Statement.filter((s) => s.Action !== 's3:ListBucket') },
    }
    await withHarness([withoutList], async (aws, env) => {
      const result = await runCliProcess(['export', '--demo', '--out', `s3://${BUCKET}/${PREFIX}`], env)
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(
        `error [WAREHOUSE_ACCESS_DENIED]: --out s3://${BUCKET}/${PREFIX}: AccessDenied: Access Denied`,
      )
      expect(result.stderr).toContain(
        `next step: your credentials need s3:ListBucket on arn:aws:s3:::${BUCKET} (s3:prefix ${PREFIX}/*), and s3:GetObject, s3:PutObject and s3:AbortMultipartUpload on arn:aws:s3:::${BUCKET}/${PREFIX}/*`,
      )
      expect(result.stderr).not.toMatch(/^\s+at /m)
      expect(aws.authorizer.actionsSent()).toEqual(['s3:ListBucket'])
    })
  }, 60_000)
})

/** The documented policy with `action` taken out of every statement. */
const policyWithout = (action: string): IdentityPolicy => ({
  ...policy,
  policy: {
    ...policy.policy,
    Statement: policy.policy.Statement.map((s) => ({
      ...s,
      Action: [s.Action as string | string[]].flat().filter((a) => a !== action),
    })).filter((s) => s.Action.length > 0),
  },
})

describe('the CLI with less than the documented policy, or another stack', () => {
  it('ends a stack the policy does not cover as AWS answers it, AccessDenied, before anything is downloaded', async () => {
    await withHarness([policy], async (aws, env) => {
      const result = await runCliProcess(['export', '--demo', '--stack', 'InventoryExport-Typo'], env)
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(
        `error [AWS_UNAVAILABLE]: cannot read stack InventoryExport-Typo in ${LOCAL_REGION}: AccessDenied: not authorized`,
      )
      expect(result.stderr).toMatch(
        /^next step: .*with cloudformation:DescribeStacks on the stack, and check its name/m,
      )
      expect(result.stderr).not.toContain('demo: exporting')
      expect(aws.authorizer.actionsSent()).toEqual(['cloudformation:DescribeStacks'])
    })
  }, 60_000)

  it('fails each table as the Lambda does when PutObject is denied: PUBLISH_FAILED, exit 1', async () => {
    await withHarness([policyWithout('s3:PutObject')], async (_aws, env) => {
      const result = await runCliProcess(
        ['export', '--demo', '--out', `s3://${BUCKET}/${PREFIX}`, '--only', 'users', '--date', '2026-05-04'],
        env,
      )
      expect(result.exitCode).toBe(1)
      // The first write is the table's lease, before anything is downloaded.
      expect(result.stderr).toContain(
        `users: FAILED [PUBLISH_FAILED] writing s3://${BUCKET}/${PREFIX}/_leases/users.json failed: AccessDenied (HTTP 403): Access Denied`,
      )
      // The run record cannot be written either: the command ends on that, as the Lambda's invocation does.
      expect(result.stderr).toMatch(
        /^error \[PUBLISH_FAILED\]: writing s3:\/\/[\w/.-]+\/_runs\/dt=2026-05-04\/[\w-]+\.json failed: AccessDenied/m,
      )
      expect(result.stderr).not.toMatch(/^\s+at /m)
    })
  }, 60_000)

  it('publishes with a warning when Glue is denied, as the Lambda does', async () => {
    await withHarness([policyWithout('glue:CreateTable')], async (aws, env) => {
      const result = await runCliProcess(
        ['export', '--demo', '--out', `s3://${BUCKET}/${PREFIX}`, '--glue-database', DATABASE, '--only', 'users'],
        env,
      )
      expect(result.exitCode).toBe(0)
      expect(result.stderr).toMatch(
        /^warning: users: the catalog was not updated \(.*is not authorized to perform: glue:CreateTable.*\); the date's data, registry and run index are in place, and the next run updates the catalog$/m,
      )
      expect(aws.json.glueTables.size).toBe(0)
    })
  }, 60_000)
})
