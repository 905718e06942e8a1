/**
 * The first run on AWS, offline: `cdk synth` as a user runs it, then the bundle from cdk.out invoked with every
 * schedule's input on two export dates (the first run, with nothing in the bucket, included) against stand-ins
 * that decide as AWS does (harness.ts): IAM from the synthesized role policy, S3's 403 for a missing key the
 * caller may not list, Glue's API model. Every invocation must publish; then the actions sent are measured
 * against the role's grants.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { sampleConfigInput } from '../infra/synth.ts'
import { type AwsHarness, startAwsHarness } from './harness.ts'
import { grantedActions, resolveIntrinsics, type SynthesizedTemplate } from './role-policy.ts'
import { type BundleTemplate, cdkSynth, exporterFunction, type Invocation, invokeBundle } from './synthesized-bundle.ts'

const BUCKET = 'inventory-warehouse-first-run'
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:InventoryExportToken-AbCdEf'
const ROWS = { devices: 300, software: 200, users: 40 }
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Actions the Lambda service sends with the function's role, not the function's code: writing its logs, and
 * delivering a failed asynchronous invocation to the on-failure destination.
 */
const SENT_BY_LAMBDA_ON_ITS_BEHALF = ['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:SendMessage']
/**
 * Actions the code sends that a run where every table publishes unchanged does not: each names the path that
 * sends it and the test that exercises that path over the wire.
 */
const SENT_ON_OTHER_PATHS: Record<string, string> = {
  'glue:UpdateTable':
    'a table whose columns changed (catalog/reconcile.ts; test/integration/catalog-reconcile.test.ts)',
  's3:AbortMultipartUpload':
    'an upload that fails or is cancelled (publish/s3.ts; test/integration/s3-store.test.ts asks s3rver for uploads left)',
}

let work: string
let out: string
let template: BundleTemplate
let emulator: RunningEmulator
let aws: AwsHarness
const invocations: { event: unknown; outcome: Invocation }[] = []

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'aws-first-run-'))
  out = path.join(work, 'cdk.out')
  const config = path.join(work, 'config.json')
  await writeFile(config, JSON.stringify(sampleConfigInput()))
  template = await cdkSynth(config, out)
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: ROWS }) })
  aws = await startAwsHarness({
    template: template as unknown as SynthesizedTemplate,
    names: { bucket: BUCKET, secretArn: SECRET_ARN },
    secretValue: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }),
  })
}, 240_000)

afterAll(async () => {
  await emulator?.close()
  await aws?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

const schedules = () =>
  Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Scheduler::Schedule')
    .map((r) => JSON.parse(r.Properties.Target!.Input!) as Record<string, unknown>)

describe('the synthesized stack on its first runs, against stand-ins that decide as AWS does', () => {
  it('publishes every table on every schedule for two export dates, the first with an empty bucket', async () => {
    const { fn, assetDir } = exporterFunction(template, out)
    const environment = resolveIntrinsics(
      fn.Properties.Environment?.Variables ?? {},
      template as unknown as SynthesizedTemplate,
      {
        bucket: BUCKET,
        secretArn: SECRET_ARN,
      },
    ) as Record<string, string>
    const inputs = schedules()
    expect(inputs.length).toBeGreaterThan(0)
    const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10)
    // Yesterday named in the event (the first run: nothing in the bucket), then each schedule's input as is (today).
    const events = [...inputs.map((input) => ({ ...input, exportDate: yesterday })), ...inputs]
    for (const event of events) {
      const outcome = await invokeBundle(
        { fn, assetDir, environment, sdkEnvironment: aws.sdkEnvironment, scratch: work },
        event,
      )
      invocations.push({ event, outcome })
    }
    // On failure the errors name the request S3 or Glue refused; aws.authorizer.denied() lists them all.
    expect(
      invocations.map(({ event, outcome }) => ({
        event,
        ok: outcome.ok,
        status: outcome.result?.status,
        error: outcome.error,
      })),
    ).toEqual(events.map((event) => ({ event, ok: true, status: 'succeeded', error: undefined })))
    // IAM denied nothing the function sent. A missing key's 403 (S3's rule: the role may not list the whole
    // bucket) is expected on the first run: the store then lists the key's own name to tell absence (publish/s3.ts).
    expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
    expect(aws.authorizer.refusals.every((r) => r.action === 's3:GetObject')).toBe(true)
    const prefix = 'inventory'
    for (const { event, outcome } of invocations) {
      for (const table of (event as { tables: string[] }).tables) {
        expect(await aws.s3.read(`${prefix}/${table}/dt=${outcome.result!.exportDate}/data.parquet`)).toBeDefined()
      }
    }
    expect(new Set(invocations.map(({ outcome }) => outcome.result!.exportDate)).size).toBe(2)
  }, 600_000)

  it('grants the role exactly the actions the function and the Lambda service send', () => {
    expect(invocations.length).toBeGreaterThan(0)
    const sent = aws.authorizer.actionsSent()
    const granted = grantedActions(aws.policies)
    expect(sent.filter((action) => !granted.includes(action))).toEqual([])
    const accounted = new Set([...sent, ...SENT_BY_LAMBDA_ON_ITS_BEHALF, ...Object.keys(SENT_ON_OTHER_PATHS)])
    expect(granted.filter((action) => !accounted.has(action))).toEqual([])
    // Every action named as sent elsewhere is still granted, so the list cannot go stale silently.
    expect(Object.keys(SENT_ON_OTHER_PATHS).filter((action) => !granted.includes(action))).toEqual([])
  })
})
