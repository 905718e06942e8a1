/**
 * Reprocess trusts a raw archive only as far as the run that wrote it vouches for it: the archive's content must
 * have the SHA-256 that run recorded. Another valid body in its place (same header, same row count, one cell
 * changed) fails the table with STATE_CORRUPT and publishes nothing; an archive no run record vouches for (a
 * warehouse from before run records kept the digest) is rebuilt with a warning. Through the real CLI.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { query } from '../support/duckdb.ts'

const DATE = '2026-04-01'
const ARCHIVE = `_raw/assets/dt=${DATE}/body.csv.gz`
const DATA = `assets/dt=${DATE}/data.parquet`
const CSV = 'Tag,Owner\r\nT-1,Ada\r\nT-2,Grace\r\n'
/** A body the service could have sent, but not the one archived for the date. */
const SWAPPED = 'Tag,Owner\r\nT-1,Eve\r\nT-2,Grace\r\n'

let emulator: RunningEmulator
let token: string
let out: string
let config: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [{ id: '3001', title: 'Assets', rawCsv: CSV }] })
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())
beforeEach(async () => {
  out = await tempDir('raw-archive-digest-')
  config = path.join(await tempDir('raw-archive-digest-config-'), 'config.json')
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: '3001', name: 'assets', archiveRaw: true }],
    }),
  )
  const exported = await runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', DATE])
  expect(exported.exitCode, exported.stderr).toBe(0)
})

const reprocess = () => runCommandInProcess('reprocess', ['--config', config, '--out', out, '--date', DATE])
const read = (key: string) => readFile(path.join(out, key))
const owners = async () =>
  (await query(`SELECT owner FROM '${path.join(out, DATA)}' ORDER BY _source_row_number`)).map((r) => r.owner)

/** Everything but the run records and the table's lease (every run takes it), by key: nothing else moved. */
const published = async (): Promise<Map<string, Buffer>> => {
  const entries = await readdir(out, { recursive: true, withFileTypes: true })
  const keys = entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(out, path.join(e.parentPath, e.name)))
    .filter((key) => !key.startsWith('_runs') && !key.startsWith('_leases'))
    .sort()
  return new Map(await Promise.all(keys.map(async (key) => [key, await read(key)] as const)))
}

describe('reprocess checks the raw archive against the run record that wrote it', () => {
  it('fails a swapped archive as STATE_CORRUPT naming the object and the next step, publishing nothing', async () => {
    await writeFile(path.join(out, ARCHIVE), gzipSync(SWAPPED))
    const before = await published()

    const result = await reprocess()

    expect(result.exitCode).toBe(1)
    const failed = result.stderr.split('\n').filter((line) => line.startsWith('assets: FAILED'))
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatch(
      new RegExp(
        `^assets: FAILED \\[STATE_CORRUPT\\] table 3001: .*/${ARCHIVE} cannot be trusted: its content's SHA-256`,
      ),
    )
    expect(failed[0]).toMatch(/not the [0-9a-f]{12}… run \S+ recorded when it archived the date/)
    expect(result.stderr).toMatch(
      /restore _raw\/assets\/dt=2026-04-01\/body\.csv\.gz from the S3 version run \S+ wrote/,
    )
    expect(await published()).toEqual(before)
    expect(await owners()).toEqual(['Ada', 'Grace'])
  })

  it('rebuilds the archive the run recorded, with no warning', async () => {
    await rm(path.join(out, DATA))

    const result = await reprocess()

    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stderr + result.stdout).not.toMatch(/unverified/)
    expect(await owners()).toEqual(['Ada', 'Grace'])
  })

  it('rebuilds an archive no run record vouches for, with a warning saying it is unverified', async () => {
    // A warehouse from before run records kept the digest: the export's record has none.
    const folder = path.join(out, '_runs', `dt=${DATE}`)
    for (const file of await readdir(folder)) {
      const record = JSON.parse(await readFile(path.join(folder, file), 'utf8')) as RunRecord
      const tables = record.tables.map(({ sha256: _, ...table }) => table)
      await writeFile(path.join(folder, file), JSON.stringify({ ...record, tables }))
    }
    await writeFile(path.join(out, ARCHIVE), gzipSync(SWAPPED))

    const result = await reprocess()

    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stderr + result.stdout).toContain(
      `no run record of ${DATE} holds the SHA-256 of ${ARCHIVE}: it was rebuilt unverified`,
    )
    expect(await owners()).toEqual(['Eve', 'Grace'])
  })
})
