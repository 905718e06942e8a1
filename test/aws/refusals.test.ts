/**
 * The harness refuses what AWS refuses: the stack's own role policy (synthesized in-process), with and without its
 * listing grant, decides a GetObject of a missing key; a stale If-Match is a 412; Glue's model refuses a
 * 256-character column name. Each refusal is shown beside the request AWS accepts, so none can pass vacuously.
 */
import { CreateTableCommand, GetDatabaseCommand, GlueClient, type TableInput } from '@aws-sdk/client-glue'
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import { sampleConfigInput, synthesize } from '../infra/synth.ts'
import { type AwsHarness, startAwsHarness } from './harness.ts'
import { type IdentityPolicy, rolePolicies, type SynthesizedTemplate } from './role-policy.ts'

const NAMES = {
  bucket: 'warehouse-refusals',
  secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf',
}

const shippedPolicies = (): IdentityPolicy[] =>
  rolePolicies(synthesize(sampleConfigInput()).template.toJSON() as SynthesizedTemplate, 'ExporterRole', NAMES)

/** The same policies with every statement that allows s3:ListBucket removed. */
const withoutListing = (policies: IdentityPolicy[]): IdentityPolicy[] =>
  policies.map((p) => ({
    ...p,
    policy: { ...p.policy, Statement: p.policy.Statement.filter((s) => ![s.Action].flat().includes('s3:ListBucket')) },
  }))

const statusOf = async (send: Promise<unknown>) => {
  try {
    await send
    return { status: 200, name: 'ok' }
  } catch (error) {
    const e = error as { name: string; $metadata?: { httpStatusCode?: number } }
    return { status: e.$metadata?.httpStatusCode, name: e.name }
  }
}

const harnesses: AwsHarness[] = []
let shipped: IdentityPolicy[]
const start = async (policies: IdentityPolicy[]) => {
  const harness = await startAwsHarness({ policies, names: NAMES, secretValue: '{}' })
  harnesses.push(harness)
  return harness
}

beforeAll(() => {
  shipped = shippedPolicies()
}, 240_000)
afterAll(async () => {
  for (const harness of harnesses) await harness.close()
})

describe('S3 in the harness', () => {
  let client: S3Client
  const get = (Key: string) => client.send(new GetObjectCommand({ Bucket: NAMES.bucket, Key }))
  const head = (Key: string) => client.send(new HeadObjectCommand({ Bucket: NAMES.bucket, Key }))

  it('answers a missing key 403 AccessDenied to a role that may not list the bucket, as S3 does', async () => {
    client = (await start(withoutListing(shipped))).s3.client
    expect(await statusOf(get('inventory/_schemas/devices.json'))).toEqual({ status: 403, name: 'AccessDenied' })
    expect((await statusOf(head('inventory/_schemas/devices.json'))).status).toBe(403)
  })

  it('answers a missing key 404 NoSuchKey to a role that may list the whole bucket', async () => {
    const listAll = { Effect: 'Allow', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${NAMES.bucket}` }
    client = (await start([...shipped, { name: 'list-all', policy: { Version: '2012-10-17', Statement: [listAll] } }]))
      .s3.client
    expect(await statusOf(get('inventory/_schemas/devices.json'))).toEqual({ status: 404, name: 'NoSuchKey' })
    expect((await statusOf(head('inventory/_runs/latest/devices.json'))).status).toBe(404)
  })

  it('lets the store tell a missing key from a denied one under the shipped role, which may list only its prefix', async () => {
    const harness = await start(shipped)
    client = harness.s3.client
    const store = new S3WarehouseStore(client, NAMES.bucket, 'inventory')
    expect(await statusOf(get('inventory/_schemas/devices.json'))).toEqual({ status: 403, name: 'AccessDenied' })
    expect(await store.getObject('_schemas/devices.json')).toBeUndefined()
    expect(await store.getObjectVersion('_runs/latest/devices.json')).toBeUndefined()
    // A footer's read starts with a HEAD, whose 403 has no body to name it.
    expect(await store.readTail('devices/dt=2026-11-20/data.parquet', 8)).toBeUndefined()
    await store.putObject('_schemas/devices.json', '{}', 'application/json')
    expect((await store.getObject('_schemas/devices.json'))?.toString()).toBe('{}')
    // Outside the prefix the role may not list either: the 403 stands, nothing is taken for absent.
    const outside = new S3WarehouseStore(client, NAMES.bucket, 'elsewhere')
    await expect(outside.getObject('report.csv')).rejects.toThrow(/AccessDenied/)
    await expect(outside.readTail('report.csv', 8)).rejects.toMatchObject({ code: 'PUBLISH_FAILED' })
  })

  it('denies the shipped role objects outside its prefix', async () => {
    const harness = await start(shipped)
    client = harness.s3.client
    expect(await statusOf(get('elsewhere/report.csv'))).toEqual({ status: 403, name: 'AccessDenied' })
    const put = client.send(new PutObjectCommand({ Bucket: NAMES.bucket, Key: 'elsewhere/x', Body: 'x' }))
    expect(await statusOf(put)).toEqual({ status: 403, name: 'AccessDenied' })
    expect(harness.authorizer.denied().map((d) => d.action)).toEqual(['s3:GetObject', 's3:PutObject'])
  })

  it('refuses a PutObject whose If-Match names a stale ETag with 412 PreconditionFailed', async () => {
    client = (await start(shipped)).s3.client
    const put = (Body: string, condition: { IfMatch?: string; IfNoneMatch?: string }) =>
      client.send(
        new PutObjectCommand({ Bucket: NAMES.bucket, Key: 'inventory/_runs/latest/devices.json', Body, ...condition }),
      )
    const first = await put('{"run":1}', { IfNoneMatch: '*' })
    const second = await put('{"run":2}', { IfMatch: first.ETag! })
    expect(await statusOf(put('{"run":3}', { IfMatch: first.ETag! }))).toEqual({
      status: 412,
      name: 'PreconditionFailed',
    })
    expect(await statusOf(put('{"run":3}', { IfNoneMatch: '*' }))).toEqual({ status: 412, name: 'PreconditionFailed' })
    expect(await statusOf(put('{"run":3}', { IfMatch: second.ETag! }))).toEqual({ status: 200, name: 'ok' })
  })
})

describe('Glue in the harness', () => {
  const tableInput = (columnName: string): TableInput => ({
    Name: 'devices',
    TableType: 'EXTERNAL_TABLE',
    PartitionKeys: [{ Name: 'dt', Type: 'string' }],
    StorageDescriptor: {
      Columns: [{ Name: columnName, Type: 'string' }],
      Location: `s3://${NAMES.bucket}/inventory/devices/`,
    },
  })

  it('refuses a column name of 256 characters as the Glue API model does, and takes one of 255', async () => {
    const harness = await start(shipped)
    const glue = new GlueClient({
      endpoint: harness.json.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' },
    })
    const create = (name: string) =>
      glue.send(new CreateTableCommand({ DatabaseName: 'inventory', TableInput: tableInput(name) }))
    expect(await statusOf(create('c'.repeat(256)))).toEqual({ status: 400, name: 'ValidationException' })
    expect(harness.json.requests.at(-1)?.reply.message).toContain(
      "Value at 'tableInput.storageDescriptor.columns.1.member.name' failed to satisfy constraint: Member must have length less than or equal to 255",
    )
    expect(await statusOf(create('c'.repeat(255)))).toEqual({ status: 200, name: 'ok' })
    // The role may not read the database's own definition: the function never asks for it.
    expect(await statusOf(glue.send(new GetDatabaseCommand({ Name: 'inventory' })))).toEqual({
      status: 400,
      name: 'AccessDeniedException',
    })
    glue.destroy()
  })
})
