/**
 * Retention's DeleteObject as IAM decides it for the synthesized exporter role (iam-simulate), and the S3 store's
 * removal of a table's past dates through S3's IAM front: nothing but the table's own dated objects can go.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import { expireDates } from '../../functions/export/schema/retention.ts'
import { sampleConfigInput, synthesize } from '../infra/synth.ts'
import { type AwsHarness, startAwsHarness } from './harness.ts'
import { Authorizer } from './iam.ts'
import { rolePolicies, type SynthesizedTemplate } from './role-policy.ts'

const NAMES = { bucket: 'warehouse-bucket', secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf' }
const object = (key: string) => `arn:aws:s3:::${NAMES.bucket}/inventory/${key}`

/** The sample configuration with `retention` on the named tables (the sample's own tables, or generated ones). */
const withRetention = (named: readonly string[], extra = 0): SynthesizedTemplate => {
  const input = sampleConfigInput() as { tables: { id: string; name?: string }[] }
  const tables = [
    ...input.tables.map((t) => (named.includes(t.name ?? '') ? { ...t, retention: { days: 30 } } : t)),
    ...Array.from({ length: extra }, (_, i) => ({ id: `9${i}`, name: `extra_${i}`, retention: { days: 7 } })),
  ]
  return synthesize({ ...input, tables }).template.toJSON() as SynthesizedTemplate
}

const mayDelete = async (template: SynthesizedTemplate, keys: readonly string[]): Promise<Record<string, boolean>> => {
  const authorizer = new Authorizer(rolePolicies(template, 'ExporterRole', NAMES))
  const decisions = await Promise.all(
    keys.map((key) => authorizer.decide({ action: 's3:DeleteObject', resource: object(key) })),
  )
  return Object.fromEntries(keys.map((key, i) => [key, decisions[i]!.allowed]))
}

const KEYS = [
  'devices/dt=2026-01-01/data.parquet',
  '_export_dates/devices/dt=2026-01-01/dates.parquet',
  '_raw/devices/dt=2026-01-01/body.csv.gz',
  'installed_software/dt=2026-01-01/data.parquet',
  '_runs/dt=2026-01-01/20260101T000000Z-abcd.json',
  '_runs/latest/devices.json',
  '_schemas/devices.json',
]

describe('DeleteObject for retention, as IAM decides it for the synthesized role', () => {
  it('is granted nowhere when no table has a retention', async () => {
    expect(Object.values(await mayDelete(withRetention([]), KEYS))).toEqual(KEYS.map(() => false))
  })

  it("is granted on the retained table's dated objects only", async () => {
    expect(await mayDelete(withRetention(['devices']), KEYS)).toEqual({
      'devices/dt=2026-01-01/data.parquet': true,
      '_export_dates/devices/dt=2026-01-01/dates.parquet': true,
      '_raw/devices/dt=2026-01-01/body.csv.gz': true,
      'installed_software/dt=2026-01-01/data.parquet': false,
      '_runs/dt=2026-01-01/20260101T000000Z-abcd.json': false,
      '_runs/latest/devices.json': false,
      '_schemas/devices.json': false,
    })
  })

  it('keeps the policy small for many retained tables and never grants the run records or registries', async () => {
    const template = withRetention(['devices'], 25)
    const decided = await mayDelete(template, [...KEYS, 'extra_3/dt=2026-01-01/data.parquet'])
    expect(decided).toMatchObject({
      'devices/dt=2026-01-01/data.parquet': true,
      'extra_3/dt=2026-01-01/data.parquet': true,
      '_runs/dt=2026-01-01/20260101T000000Z-abcd.json': false,
      '_runs/latest/devices.json': false,
      '_schemas/devices.json': false,
    })
    const policy = JSON.stringify(rolePolicies(template, 'ExporterRole', NAMES).map((p) => p.policy))
    expect(policy.length).toBeLessThan(10_240)
  })
})

describe("the S3 store removing a table's past dates through S3's IAM front", () => {
  let aws: AwsHarness | undefined
  afterEach(async () => {
    await aws?.close()
  })

  it('removes the dates past the retention, with only requests the role may send', async () => {
    aws = await startAwsHarness({ template: withRetention(['devices']), names: NAMES, secretValue: 'unused' })
    const store = new S3WarehouseStore(aws.s3.client, NAMES.bucket, 'inventory')
    for (const date of ['2026-01-01', '2026-01-02', '2026-01-03']) {
      await store.putObject(`devices/dt=${date}/data.parquet`, 'x', 'application/octet-stream')
      await store.putObject(`_raw/devices/dt=${date}/body.csv.gz`, 'x', 'application/gzip')
    }
    const expired = await expireDates(store, 'devices', { days: 2 })
    expect(expired.dates).toEqual(['2026-01-01'])
    expect(await store.listKeys('devices/')).toEqual([
      'devices/dt=2026-01-02/data.parquet',
      'devices/dt=2026-01-03/data.parquet',
    ])
    expect(await store.listKeys('_raw/devices/')).toHaveLength(2)
    expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
    expect(aws.authorizer.actionsSent()).toContain('s3:DeleteObject')
  })
})
