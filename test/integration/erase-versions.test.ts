/**
 * `npm run erase` against a versioned bucket (s3rver with the versions model of test/support/s3rver-versions.ts):
 * afterwards no version of any object under the table's prefixes holds the erased value, whether it was the current
 * version or an earlier one (a date exported twice), the raw bodies are gone with every version, and each date's run
 * record counts the versions deleted; with `--keep-versions` the earlier versions stay, as before.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { GetObjectCommand, ListObjectVersionsCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { runCommandInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATES = ['2026-11-20', '2026-11-21', '2026-11-22']
const DEVICE = '000007'

let emulator: RunningEmulator
let s3: RunningS3
let config: string
let token: string
let serial: string

/** Every version of every object under `prefix`, with its bytes. */
const allVersions = async (prefix: string) => {
  const listing = await s3.client.send(new ListObjectVersionsCommand({ Bucket: s3.bucket, Prefix: prefix }))
  const versions = await Promise.all(
    (listing.Versions ?? []).map(async (v) => {
      const object = await s3.client.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: v.Key!, VersionId: v.VersionId! }),
      )
      return { key: v.Key!, latest: v.IsLatest === true, body: Buffer.from(await object.Body!.transformToByteArray()) }
    }),
  )
  return { versions, markers: listing.DeleteMarkers ?? [] }
}

/** Whether a stored object (a Parquet date, a gzipped raw body, JSON) holds `value` in any of its rows or bytes. */
const holds = async (key: string, body: Buffer, value: string): Promise<boolean> => {
  if (key.endsWith('.parquet')) return (await readWithHyparquet(body)).some((row) => Object.values(row).includes(value))
  return (key.endsWith('.gz') ? gunzipSync(body) : body).includes(value)
}

/** A warehouse under `prefix` with three dates, the second exported twice (its first version an earlier one). */
const exported = async (prefix: string) => {
  const out = `s3://${s3.bucket}/${prefix}`
  for (const date of [...DATES, DATES[1]!]) {
    emulator.upstream.setDate(date)
    const result = await runCommandInProcess('export', [
      ...['--config', config, '--token-file', token],
      ...['--out', out, '--date', date],
    ])
    expect(result.exitCode, result.stderr).toBe(0)
  }
  return out
}

beforeAll(async () => {
  const work = await tempDir('erase-versions-')
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 40, software: 5, users: 5 } }) })
  s3 = await startS3('warehouse', { versioned: true })
  Object.assign(process.env, {
    ...s3.sdkEnvironment,
    AWS_CONFIG_FILE: path.join(work, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    // An erasure records its request with the key.
    INVENTORY_PSEUDONYMIZATION_KEY: 'k'.repeat(32),
  })
  token = await tokenFile(DEMO_TOKEN)
  config = path.join(work, 'config.json')
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }],
    }),
  )
  const csv = await (await fetch(`${emulator.baseUrl}/rest/tables/1001/csv`, { headers: { token: DEMO_TOKEN } })).text()
  serial = csv
    .split('\n')
    .find((line) => line.startsWith(`${DEVICE},`))!
    .split(',')[1]!
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  await s3?.close()
})

describe('npm run erase in a versioned bucket', () => {
  it('leaves no version of the table objects holding the value, and counts the versions it deleted', async () => {
    const out = await exported('purged')
    const before = await allVersions('purged/devices/')
    expect(before.versions.filter((v) => !v.latest).length).toBeGreaterThan(0)
    const result = await runCommandInProcess('erase', [
      ...['--config', config, '--out', out, '--table', 'devices', '--where', `device_id=${DEVICE}`],
    ])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/removed from 3 dates .*; \d+ earlier object versions deleted/)
    expect(result.stderr).toContain('devices: not reached by an erasure: copies outside the warehouse')
    for (const prefix of ['purged/devices/', 'purged/_raw/devices/']) {
      const { versions, markers } = await allVersions(prefix)
      for (const version of versions) {
        expect(await holds(version.key, version.body, serial), version.key).toBe(false)
        expect(await holds(version.key, version.body, DEVICE), version.key).toBe(false)
      }
      expect(versions.filter((v) => !v.latest)).toEqual([])
      if (prefix.includes('_raw'))
        expect({ versions: versions.length, markers: markers.length }).toEqual({ versions: 0, markers: 0 })
    }
    // Each rewritten date's run record says how many earlier versions of its objects went.
    const records = (await allVersions('purged/_runs/')).versions.filter((v) => /\/_runs\/dt=/.test(v.key))
    const erasures = records.map((v) => JSON.parse(v.body.toString()) as RunRecord).filter((r) => r.mode === 'erase')
    expect(erasures).toHaveLength(3)
    const counts = erasures.map((r) => r.tables[0]!.versionsDeleted)
    expect(counts.every((n) => typeof n === 'number' && n > 0)).toBe(true)
    // The date exported twice had one more version of its data and of its raw body to delete.
    const twice = erasures.find((r) => r.exportDate === DATES[1])!.tables[0]!.versionsDeleted!
    expect(twice).toBeGreaterThan(erasures.find((r) => r.exportDate === DATES[0])!.tables[0]!.versionsDeleted!)
  })

  it('with --keep-versions, leaves the earlier versions to the bucket version expiry', async () => {
    const out = await exported('kept')
    const result = await runCommandInProcess('erase', [
      ...['--config', config, '--out', out, '--table', 'devices', '--where', `device_id=${DEVICE}`, '--keep-versions'],
    ])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('earlier object version')
    const { versions } = await allVersions('kept/devices/')
    const earlier = versions.filter((v) => !v.latest)
    expect(earlier.length).toBeGreaterThan(0)
    const holding = await Promise.all(earlier.map((v) => holds(v.key, v.body, DEVICE)))
    expect(holding.some(Boolean)).toBe(true)
    for (const version of versions.filter((v) => v.latest))
      expect(await holds(version.key, version.body, DEVICE)).toBe(false)
  })
})
