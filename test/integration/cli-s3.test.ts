/**
 * `npm start`, `npm run reprocess`, `erase` and `rewrite` with `--out s3://BUCKET/PREFIX`: the real CLI, in a child process with the
 * operator's credentials taken from the SDK's usual environment variables, against s3rver. The keys must be the
 * ones a local export writes, and S3's refusals must end as one coded line.
 */
import { readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const DATE = '2026-05-04'
let s3: RunningS3
let work: string
let emulator: RunningEmulator

beforeAll(async () => {
  s3 = await startS3('warehouse')
  work = await tempDir('cli-s3-')
  emulator = await startInventoryEmulator()
})
afterAll(async () => {
  await s3?.close()
  await emulator?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

/** The SDK's environment for s3rver, and no shared config, profile or instance metadata to fall back on. */
const awsEnvironment = (overrides: Record<string, string | undefined> = {}) => ({
  ...s3.sdkEnvironment,
  AWS_CONFIG_FILE: path.join(work, 'no-config'),
  AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'no-credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_PROFILE: '',
  ...overrides,
})
const cli = (argv: readonly string[], overrides?: Record<string, string | undefined>) =>
  runCliProcess(argv, awsEnvironment(overrides))

const s3Keys = async (prefix: string): Promise<string[]> => {
  const keys: string[] = []
  let token: string | undefined
  do {
    const page = await s3.client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix, ContinuationToken: token }),
    )
    keys.push(...(page.Contents ?? []).map((object) => object.Key!))
    token = page.NextContinuationToken
  } while (token !== undefined)
  return keys.sort()
}

const folderKeys = async (root: string): Promise<string[]> =>
  (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((key) => !key.startsWith('_tmp/'))
    .sort()

/** Run records are named by their run id, which differs from run to run. */
const withoutRunIds = (keys: readonly string[]) =>
  keys.map((key) => key.replace(/^(_runs\/dt=[\d-]+\/)[^/]+\.json$/, '$1RUN.json'))

const noStack = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m)

describe('npm start --out s3://BUCKET/PREFIX', () => {
  it('lands the keys of a local export under the prefix, and the Parquet reads back', async () => {
    const result = await cli(['export', '--demo', '--out', 's3://warehouse/team/inventory', '--date', DATE])
    expect(result.stderr).not.toMatch(/error \[/)
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('tables exported to s3://warehouse/team/inventory')

    const local = path.join(work, 'local')
    expect((await cli(['export', '--demo', '--out', local, '--date', DATE])).exitCode).toBe(0)
    const uploaded = (await s3Keys('team/inventory/')).map((key) => key.slice('team/inventory/'.length))
    expect(withoutRunIds(uploaded)).toEqual(withoutRunIds(await folderKeys(local)))
    expect(uploaded).toContain(`devices/dt=${DATE}/data.parquet`)

    const rows = await readWithHyparquet((await s3.read(`team/inventory/devices/dt=${DATE}/data.parquet`))!)
    expect(rows.length).toBeGreaterThan(0)
    expect(rows[0]).toHaveProperty('device_id')
    // No folder named after the URL appears where the command ran (issue 42).
    expect(await readdir(path.resolve(import.meta.dirname, '../..'))).not.toContain('s3:')
  }, 120_000)

  it('writes at the top of the bucket when the URL names no prefix', async () => {
    const bucket = await startS3('bare')
    try {
      const result = await runCliProcess(
        ['export', '--demo', '--out', 's3://bare', '--date', DATE, '--only', 'users'],
        { ...awsEnvironment(), ...bucket.sdkEnvironment },
      )
      expect(result.stderr).not.toMatch(/error \[/)
      expect(result.exitCode).toBe(0)
      expect(await bucket.read(`users/dt=${DATE}/data.parquet`)).toBeDefined()
      expect(await bucket.read('_schemas/users.json')).toBeDefined()
    } finally {
      await bucket.close()
    }
  }, 60_000)

  it('rebuilds a date from the archive in S3 with npm run reprocess', async () => {
    const config = path.join(work, 'archive.json')
    await writeFile(
      config,
      JSON.stringify({
        source: { baseUrl: emulator.baseUrl },
        tables: [{ id: '1003', name: 'users', archiveRaw: true }],
      }),
    )
    const out = 's3://warehouse/archived'
    const token = await tokenFile(DEMO_TOKEN)
    const exported = await cli(['export', '--config', config, '--token-file', token, '--out', out, '--date', DATE])
    expect(exported.exitCode, exported.stderr).toBe(0)
    expect(await s3.read(`archived/_raw/users/dt=${DATE}/body.csv.gz`)).toBeDefined()
    const before = await readWithHyparquet((await s3.read(`archived/users/dt=${DATE}/data.parquet`))!)
    emulator.requests.length = 0

    const rebuilt = await cli(['reprocess', '--config', config, '--out', out, '--date', DATE])

    expect(rebuilt.stderr).not.toMatch(/error \[/)
    expect(rebuilt.exitCode).toBe(0)
    expect(emulator.requests).toEqual([])
    const after = await readWithHyparquet((await s3.read(`archived/users/dt=${DATE}/data.parquet`))!)
    const strip = (rows: Record<string, unknown>[]) =>
      rows.map(({ _export_run_id: _, _exported_at: __, ...row }) => row)
    expect(strip(after)).toEqual(strip(before))
    expect((await s3Keys(`archived/_runs/dt=${DATE}/`)).length).toBe(2)
  }, 120_000)

  it('erases the rows holding a value from the dates in S3 with npm run erase, and deletes their raw bodies', async () => {
    const config = path.join(work, 'erase.json')
    await writeFile(
      config,
      JSON.stringify({
        source: { baseUrl: emulator.baseUrl },
        tables: [{ id: '1003', name: 'users', archiveRaw: true }],
      }),
    )
    const out = 's3://warehouse/erased'
    const token = await tokenFile(DEMO_TOKEN)
    const exported = await cli(['export', '--config', config, '--token-file', token, '--out', out, '--date', DATE])
    expect(exported.exitCode, exported.stderr).toBe(0)
    const before = await readWithHyparquet((await s3.read(`erased/users/dt=${DATE}/data.parquet`))!)
    const userId = String(before[0]!.user_id)

    const keyFile = path.join(work, 'erase-key')
    await writeFile(keyFile, 'e'.repeat(40))
    const erased = await cli([
      ...['erase', '--config', config, '--out', out, '--table', 'users', '--where', `user_id=${userId}`],
      ...['--pseudonymization-key-file', keyFile],
    ])

    expect(erased.exitCode, erased.stderr).toBe(0)
    expect(erased.stdout).toContain(`users: 1 row matching user_id removed from 1 date (dt=${DATE})`)
    // The request is recorded in the bucket, beside the table's registry.
    expect(await s3Keys('erased/_erasures/users/')).toEqual([expect.stringMatching(/\/[0-9a-f]{12}\.json$/)])
    const after = await readWithHyparquet((await s3.read(`erased/users/dt=${DATE}/data.parquet`))!)
    expect(after.map((row) => row.user_id)).toEqual(before.slice(1).map((row) => row.user_id))
    expect(await s3Keys(`erased/_raw/users/`)).toEqual([])
  }, 120_000)

  it('rewrites every date in S3 with npm run rewrite after a retype and a drop, then moves the registry', async () => {
    const devices = { id: '1001', name: 'devices', archiveRaw: true }
    const write = async (name: string, table: object) => {
      const file = path.join(work, name)
      await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [table] }))
      return file
    }
    const before = await write('rewrite-before.json', devices)
    const after = await write('rewrite-after.json', {
      ...devices,
      archiveRaw: false,
      columnTypes: { ram_gb: 'string' },
      columns: { drop: ['serial_number'] },
    })
    const out = 's3://warehouse/rewritten'
    const token = await tokenFile(DEMO_TOKEN)
    const dates = ['2026-05-01', '2026-05-02']
    for (const date of dates) {
      const exported = await cli(['export', '--config', before, '--token-file', token, '--out', out, '--date', date])
      expect(exported.exitCode, exported.stderr).toBe(0)
    }
    const refused = await cli(['export', '--config', after, '--token-file', token, '--out', out, '--date', DATE])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('npm run rewrite -- --table devices')

    const rewritten = await cli(['rewrite', '--config', after, '--out', out, '--table', 'devices'])

    expect(rewritten.exitCode, rewritten.stderr).toBe(0)
    expect(rewritten.stdout).toMatch(/devices: 2 dates \(.*\) rewritten; every date is in line/)
    for (const date of dates) {
      const [row] = await readWithHyparquet((await s3.read(`rewritten/devices/dt=${date}/data.parquet`))!)
      expect(typeof row!.ram_gb).toBe('string')
      expect(row).not.toHaveProperty('serial_number')
    }
    expect(await s3Keys('rewritten/_raw/devices/')).toEqual([])
    const registry = JSON.parse((await s3.read('rewritten/_schemas/devices.json'))!.toString('utf8'))
    expect(registry.columns.find((c: { name: string }) => c.name === 'ram_gb').type).toBe('string')
    const next = await cli(['export', '--config', after, '--token-file', token, '--out', out, '--date', DATE])
    expect(next.exitCode, next.stderr).toBe(0)
  }, 120_000)
})

describe('npm run ddl --out s3://BUCKET/PREFIX', () => {
  it('prints the DDL from the registry in S3, located there unless --location-root says otherwise', async () => {
    const token = await tokenFile(DEMO_TOKEN)
    const out = 's3://warehouse/ddl'
    const args = ['--base-url', emulator.baseUrl, '--table', '1003=users', '--token-file', token]
    expect((await cli(['export', ...args, '--out', out, '--date', DATE])).exitCode).toBe(0)
    const ddl = await cli(['ddl', '--out', out])
    expect(ddl.exitCode, ddl.stderr).toBe(0)
    expect(ddl.stdout).toContain("LOCATION 's3://warehouse/ddl/users/'")
    expect(ddl.stdout).toContain(
      `-- users_latest reads dt='${DATE}', the newest date exported when this was printed: after each export, run npm run ddl again and apply this view`,
    )
    const bad = await cli(['ddl', '--out', out, '--location-root', 'acme-lake/inv'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(
      /^error \[USAGE_INVALID\]: --location-root must be an s3:\/\/ URL \(s3:\/\/BUCKET\/PREFIX\), got "acme-lake\/inv"/m,
    )
  }, 120_000)
})

describe('npm start --out that S3 or the flags refuse', () => {
  it.each([
    ['gs://bucket/prefix', 'gs://'],
    ['http://example.com/warehouse', 'http://'],
  ])('refuses %s as a usage error naming the schemes accepted', async (out, scheme) => {
    const result = await cli(['export', '--demo', '--out', out])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain(`error [USAGE_INVALID]: --out ${out}: the scheme ${scheme} is not supported`)
    expect(result.stderr).toContain('a folder or s3://BUCKET[/PREFIX]')
  })

  it.each([
    ['s3://Bad_Bucket/inventory', 'Bad_Bucket'],
    ['s3:///inventory', ''],
  ])('refuses the bucket name of %s', async (out, bucket) => {
    const result = await cli(['export', '--demo', '--out', out])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain(`error [USAGE_INVALID]: --out ${out}: "${bucket}" is not an S3 bucket name`)
  })

  it('ends a bucket that does not exist with one coded line before anything is downloaded', async () => {
    const result = await cli(['export', '--demo', '--out', 's3://no-such-bucket/inventory'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain(
      'error [WAREHOUSE_BUCKET_NOT_FOUND]: --out s3://no-such-bucket/inventory: the bucket no-such-bucket does not exist (NoSuchBucket)',
    )
    expect(result.stderr).toMatch(/^next step: /m)
    expect(result.stderr).not.toContain('demo: exporting')
    noStack(result.stderr)
  })

  it('ends missing credentials with one coded line naming where the SDK looks', async () => {
    const result = await cli(['export', '--demo', '--out', 's3://warehouse/inventory'], {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    })
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(
      /^error \[AWS_UNAVAILABLE\]: --out s3:\/\/warehouse\/inventory: CredentialsProviderError: /m,
    )
    expect(result.stderr).toMatch(/^next step: sign in /m)
    noStack(result.stderr)
  })

  it('ends a missing region with one coded line whose next step names AWS_REGION', async () => {
    // Unset, not empty: an empty one is refused by the SDK as a hostname, which the command names the same way.
    const result = await cli(['erase', '--list', '--out', 's3://warehouse/inventory'], {
      AWS_REGION: undefined,
      AWS_DEFAULT_REGION: undefined,
    })
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(
      /^error \[AWS_UNAVAILABLE\]: --out s3:\/\/warehouse\/inventory: no AWS region is set: Error: Region is missing$/m,
    )
    expect(result.stderr).toMatch(/^next step: set AWS_REGION to the bucket's region /m)
    noStack(result.stderr)
  })

  it.each([
    ['query', ['SELECT 1']],
    ['reset', []],
  ])('refuses npm run %s with an S3 --out: it works on a local folder', async (command, rest) => {
    const result = await cli([command, '--out', 's3://warehouse/inventory', ...rest])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/^error \[USAGE_INVALID\]: --out s3:\/\/warehouse\/inventory: npm run \w+ /m)
  })
})
