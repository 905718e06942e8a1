/**
 * `export.workerThreads` at 1, 2 and 4 (one parse thread; one parse thread and the encoding thread; the parse in
 * chunks on three threads and the encoding thread) give the same outcome for every table, and the same Parquet
 * file byte for byte: the whole fidelity corpus (small bodies are parsed on the main thread and, from 2, written on
 * the encoding thread), the corpus fixtures that exercise the parser's rules made large enough to be parsed in
 * chunks (their data rows repeated past 4 MiB), hostile bodies aimed at the chunked parse (quoted line breaks that
 * read as records, endings that change, a line too long to cut at, a late error, a late type change that restarts
 * the file, a stray and an unclosed quote) and the workbook fixtures. The run's id and time, the only things that
 * differ between two runs, are set alike before comparing. Every other fixture's parse in chunks is compared with
 * the serial parse record by record in test/unit/csv/chunks.test.ts; large copies of all of them would take minutes.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { EXPORT_DATE, generatedFixtures, loadCsvFixtures, tableNameFor } from '../support/fixtures.ts'

const WORKERS = [1, 2, 4] as const
/** Past the 4 MiB from which a body is parsed in chunks (csv/parse-worker.ts). */
const LARGE_BYTES = 4.3 * 1024 * 1024

interface Case {
  readonly id: string
  readonly bytes: Uint8Array
  readonly table: Readonly<Record<string, unknown>>
}

/** The body's first line, then the rest repeated until the body passes LARGE_BYTES. */
const repeated = (bytes: Uint8Array): Buffer => {
  const body = Buffer.from(bytes)
  const firstBreak = body.indexOf(0x0a)
  if (firstBreak < 0 || firstBreak === body.length - 1) return body
  const head = body.subarray(0, firstBreak + 1)
  const rest = body.subarray(firstBreak + 1)
  const unit = rest.at(-1) === 0x0a || rest.at(-1) === 0x0d ? rest : Buffer.concat([rest, Buffer.from('\n')])
  return Buffer.concat([head, ...Array.from({ length: Math.ceil(LARGE_BYTES / unit.length) }, () => unit)])
}

/** A header and rows `row(i, count)` for as many rows as take the body past LARGE_BYTES, then `tail`. */
const large = (header: string, row: (i: number, count: number) => string, tail = ''): Buffer => {
  // Rows of six-digit numbers, as most rows of such a body are.
  const sample = Array.from({ length: 1000 }, (_, i) => row(100_000 + i, 200_000)).join('').length / 1000
  const count = Math.ceil(LARGE_BYTES / sample)
  return Buffer.from(`${header}\n${Array.from({ length: count }, (_, i) => row(i, count)).join('')}${tail}`)
}

/** Bodies aimed at the chunked parse and at the file's restart, each past 4 MiB. */
const hostile = (): Case[] => {
  const note = (i: number) => `"note ${i}\n${i},${i},${i}\nend"`
  const ending = (i: number, count: number) => (i < count / 3 ? '\n' : i < (2 * count) / 3 ? '\r\n' : '\r')
  return [
    // Lines inside the quoted notes have the header's field count: the chunk cut guesses them as records.
    ['hostile-quoted-records', large('id,qty,note', (i) => `${i},${i * 2},${i % 3 === 0 ? note(i) : 'plain'}\n`)],
    ['hostile-endings-change', large('id,qty,note', (i, n) => `${i},${i},"a\r\nb"${ending(i, n)}`)],
    ['hostile-long-line', Buffer.from(`id,blob\n1,${'x'.repeat(5 * 1024 * 1024)}\n2,y\n3,z\n`)],
    [
      'hostile-late-field-count',
      large('id,qty,note', (i, n) => (i === n - 7 ? `${i},${i}\n` : `${i},${i},"n, ${i}"\n`)),
    ],
    // qty is an integer until the last rows: every group written is void, and the file is encoded from the spool.
    [
      'hostile-late-widening',
      large('id,qty,seen', (i, n) => `${i},${i > n - 5 ? 'n/a' : i},2026-01-0${1 + (i % 9)}T10:00:00Z\n`),
    ],
    [
      'hostile-stray-quote',
      large('id,note', (i, n) => (i === Math.floor(n / 2) ? `${i},a "b" c\n` : `${i},"ok ${i}"\n`)),
    ],
    ['hostile-unclosed-quote', large('id,note', (i) => `${i},"ok ${i}"\n`, '0,"never closed\n')],
  ].map(([id, bytes]) => ({ id: id as string, bytes: bytes as Buffer, table: {} }))
}

const committed = await loadCsvFixtures()
const corpus = [...committed, ...generatedFixtures()]
/** Fixtures whose rules the chunked parse must keep: quoted line breaks, lone CRs, stray quotes, a legacy encoding. */
const LARGE = ['quoted-newlines', 'lone-cr', 'bare-quote', 'windows-1252']
const CASES: Case[] = [
  ...corpus.map((f) => ({ id: f.name, bytes: f.bytes, table: f.table })),
  ...corpus
    .filter((f) => LARGE.includes(f.name))
    .map((f) => ({ id: `${f.name}-large`, bytes: repeated(f.bytes), table: f.table })),
  ...hostile(),
]
const WORKBOOKS = ['devices-xlsxwriter', 'times-openpyxl-1904']

let emulator: RunningEmulator
const folders: string[] = []
beforeAll(async () => {
  const xlsx = path.resolve(import.meta.dirname, '../fixtures/xlsx')
  emulator = await startInventoryEmulator({
    tables: [
      ...CASES.map((c) => ({ id: c.id, title: c.id, rawCsv: c.bytes })),
      ...WORKBOOKS.map((name) => ({
        id: name,
        title: name,
        csvFile: path.join(xlsx, `${name}.csv`),
        rawXlsx: { file: path.join(xlsx, `${name}.xlsx`) },
      })),
    ],
  })
})
afterAll(async () => {
  await emulator?.close()
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })))
})

interface Export {
  readonly outcomes: Map<string, Partial<TableOutcome>>
  readonly files: Map<string, Buffer>
}

/** Every occurrence of `from` in `bytes` replaced by `to` (the same length); how many there were. */
const replaceAll = (bytes: Buffer, from: Buffer, to: Buffer): number => {
  let count = 0
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + from.length)) {
    to.copy(bytes, at)
    count++
  }
  return count
}

/** One run over every table with `workers` worker threads; each file with the run's id and time set alike. */
const exportWith = async (workers: number): Promise<Export> => {
  const out = await tempDir('inventory-workers-')
  folders.push(out)
  const csvTables = CASES.map((c) => ({ id: c.id, name: tableNameFor(c.id), ...c.table }))
  const xlsxTables = WORKBOOKS.map((name) => ({ id: name, name: tableNameFor(name), format: 'xlsx' }))
  const config = {
    source: { baseUrl: emulator.baseUrl },
    tables: [...csvTables, ...xlsxTables],
    export: { workerThreads: workers },
  }
  const configFile = `${out}.config.json`
  await writeFile(configFile, JSON.stringify(config))
  const cli = await runExportInProcess([
    '--config',
    configFile,
    '--token-file',
    await tokenFile(DEMO_TOKEN),
    '--out',
    out,
    '--date',
    EXPORT_DATE,
  ])
  expect(cli.stderr).not.toMatch(/error \[INTERNAL\]/)
  const runs = path.join(out, '_runs', `dt=${EXPORT_DATE}`)
  const [recordFile] = await readdir(runs)
  const record = JSON.parse(await readFile(path.join(runs, recordFile!), 'utf8')) as RunRecord
  const runId = Buffer.from(record.runId)
  const exportedAt = Buffer.alloc(8)
  exportedAt.writeBigInt64LE(BigInt(Date.parse(record.startedAt)))
  const outcomes = new Map<string, Partial<TableOutcome>>()
  const files = new Map<string, Buffer>()
  for (const { durationMs, objects, ...outcome } of record.tables) {
    if (process.env.SHOW_TIMES) console.log('TIME', workers, outcome.tableId, durationMs, outcome.bytesReceived)
    // What a failed table had received when it stopped depends on how far the reading ran ahead of the parse.
    const { bytesReceived, ...rest } = outcome
    outcomes.set(outcome.tableId, outcome.status === 'failed' ? rest : outcome)
    const data = objects.find((o) => o.key.endsWith('data.parquet'))
    if (data === undefined) continue
    const bytes = await readFile(path.join(out, data.key))
    // The run's id and time are in the footer, the lineage columns' one-entry dictionaries and their statistics,
    // where the id is cut to 16 bytes (its maximum with the last byte raised by one).
    expect(replaceAll(bytes, runId, Buffer.alloc(runId.length, 0x2a))).toBeGreaterThan(0)
    const cut = runId.subarray(0, 16)
    const raised = Buffer.from(cut)
    raised[15]! += 1
    for (const prefix of [cut, raised]) replaceAll(bytes, prefix, Buffer.alloc(16, 0x2a))
    const times = replaceAll(bytes, exportedAt, Buffer.alloc(8))
    // A table without rows has no row group to hold the time.
    if ((outcome.rows ?? 0) > 0) expect(times).toBeGreaterThan(0)
    files.set(outcome.tableId, bytes)
  }
  return { outcomes, files }
}

describe('the worker threads a table uses', () => {
  it('change nothing in what is published: every outcome the same, every file the same bytes', {
    timeout: 240_000,
  }, async () => {
    // One after another: each run's threads are its own.
    const runs: Export[] = []
    for (const workers of WORKERS) runs.push(await exportWith(workers))
    const [first, ...others] = runs
    expect(first!.outcomes.size).toBe(CASES.length + WORKBOOKS.length)
    expect(CASES.filter((c) => c.id.endsWith('-large'))).toHaveLength(LARGE.length)
    expect(first!.files.size).toBeGreaterThan(CASES.length / 2)
    for (const other of others) {
      for (const [table, outcome] of first!.outcomes) expect(other.outcomes.get(table), table).toEqual(outcome)
      for (const [table, bytes] of first!.files) {
        expect(other.files.get(table)?.equals(bytes), `${table}: the same file`).toBe(true)
      }
    }
  })
})
