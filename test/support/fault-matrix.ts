/**
 * The fault matrix's harness, shared by the files of test/integration/faults/: one stand-in service per file
 * with two tables (assets, archived raw, and locations), a warehouse folder and a --config per case, the
 * good export every case starts from, the fault scripts, and the checks every persistent fault shares. The
 * token the runs are given is a canary; after each case, everything the case printed and wrote is scanned for it.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import {
  type Fault,
  type RawCsvTable,
  type RunningEmulator,
  type SavedTable,
  startInventoryEmulator,
} from '../../emulator/index.ts'
import type { ExportConfigInput } from '../../functions/export/core/config.ts'
import type { FailureClass } from '../../functions/export/core/constants.ts'
import type { ErrorCode } from '../../functions/export/core/errors.ts'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { CANARY_TOKEN, canaryUser, expectNoCanary } from './canary.ts'
import { type CliResult, runExportInProcess, tempDir, tokenFile } from './cli.ts'
import { query } from './duckdb.ts'

export const DATE = '2026-03-14'
export const ASSETS = { id: '2001', name: 'assets' } as const
export const LOCATIONS = { id: '2002', name: 'locations' } as const
export const ASSET_ROWS = 40
export const MAX_ATTEMPTS = 3

/** Assets with commas, doubled quotes and line breaks inside quoted fields (every fifth row). */
export const assetsCsv = (rows = ASSET_ROWS): string => {
  const lines = ['Asset Tag,Model,Notes,Purchased,Price']
  for (let i = 1; i <= rows; i++) {
    const notes = i % 5 === 0 ? `"dock, charger\nand a ""spare"" cable"` : `plain note ${i}`
    const month = String(1 + (i % 12)).padStart(2, '0')
    lines.push(`A-${String(i).padStart(4, '0')},Model ${i % 7},${notes},2024-${month}-15,${(i * 10.5).toFixed(2)}`)
  }
  return `${lines.join('\r\n')}\r\n`
}

export const ASSETS_CSV = assetsCsv()
/** Byte offsets where a cut is interesting. */
export const CUT = {
  inHeader: 10,
  midRow: ASSETS_CSV.indexOf('A-0010') + 9,
  inQuotedField: ASSETS_CSV.indexOf('"dock, charger') + 8,
  atRowBoundary: ASSETS_CSV.indexOf('A-0021'),
} as const

export const assetsTable = (rawCsv: string = ASSETS_CSV): RawCsvTable => ({ id: ASSETS.id, title: 'Assets', rawCsv })
export const locationsTable = (): RawCsvTable => ({
  id: LOCATIONS.id,
  title: 'Locations',
  rawCsv: 'Site,City,Desks\r\nHQ,Berlin,120\r\nLab,"Lyon, Vaise",14\r\nDepot,Graz,0\r\n',
})

export const CLI = path.resolve(import.meta.dirname, '../../functions/local/cli.mjs')

/** Resolves once `condition` holds, polling every 20 ms for at most 30 s. */
export const until = async (condition: () => boolean | Promise<boolean>): Promise<void> => {
  for (const started = Date.now(); !(await condition()); ) {
    if (Date.now() - started > 30_000) throw new Error('timed out waiting for a condition')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The stand-in service of the current file; started by useFaultMatrix. */
export let emulator: RunningEmulator
/** A file holding the canary token. */
export let tokenPath: string
/** What the current case printed and wrote; scanned for the canary after each case. */
export let evidence: { texts: Record<string, string>; folders: string[] }

/** Starts the stand-in for the calling file, resets its tables and faults before each case, scans for the canary after. */
export const useFaultMatrix = (): void => {
  beforeAll(async () => {
    emulator = await startInventoryEmulator({ tables: [assetsTable(), locationsTable()], users: [canaryUser()] })
    tokenPath = await tokenFile(CANARY_TOKEN)
  })
  afterAll(() => emulator.close())
  beforeEach(() => {
    emulator.faults.clear()
    emulator.setTable(assetsTable())
    emulator.setTable(locationsTable())
    evidence = { texts: {}, folders: [] }
  })
  afterEach(async () => {
    await expectNoCanary(evidence)
  })
}

export type Tuning = NonNullable<ExportConfigInput['export']>

export interface Workspace {
  readonly out: string
  readonly config: string
}

/** A warehouse folder and a --config file with tiny retry delays and short timeouts. */
export const workspace = async (tuning: Tuning = {}, baseUrl = emulator.baseUrl): Promise<Workspace> => {
  const out = await tempDir('fault-matrix-out-')
  const config = path.join(await tempDir('fault-matrix-config-'), 'config.json')
  const input: ExportConfigInput = {
    source: { baseUrl },
    tables: [{ ...ASSETS, archiveRaw: true }, LOCATIONS],
    export: {
      concurrency: 2,
      ...tuning,
      retry: {
        maxAttempts: MAX_ATTEMPTS,
        baseDelayMs: 1,
        maxDelayMs: 5,
        maxRetryAfterSeconds: 2,
        totalBudgetSeconds: 30,
        ...tuning.retry,
      },
      timeouts: { connectSeconds: 2, idleSeconds: 1, ...tuning.timeouts },
    },
  }
  await writeFile(config, JSON.stringify(input, null, 2))
  evidence.folders.push(out)
  return { out, config }
}

export const exportArgs = (ws: Workspace): string[] => [
  '--config',
  ws.config,
  '--token-file',
  tokenPath,
  '--out',
  ws.out,
]

/** `npm start` in-process for DATE; output kept as evidence. */
export const exportDate = async (ws: Workspace, label: string, ...flags: string[]): Promise<CliResult> => {
  const result = await runExportInProcess([...exportArgs(ws), '--date', DATE, ...flags])
  evidence.texts[`${label} stdout`] = result.stdout
  evidence.texts[`${label} stderr`] = result.stderr
  return result
}

export const runIdOf = (result: CliResult): string => {
  const runId = /^run (\S+) for dt=/m.exec(result.stdout)?.[1]
  if (runId === undefined) throw new Error(`no run summary in stdout:\n${result.stdout}\n${result.stderr}`)
  return runId
}

export const runRecordOf = async (ws: Workspace, result: CliResult): Promise<RunRecord> =>
  JSON.parse(await readFile(path.join(ws.out, '_runs', `dt=${DATE}`, `${runIdOf(result)}.json`), 'utf8')) as RunRecord

export const outcomeOf = (record: RunRecord, name: string): TableOutcome => {
  const outcome = record.tables.find((t) => t.name === name)
  if (outcome === undefined) throw new Error(`no outcome for ${name} in ${JSON.stringify(record)}`)
  return outcome
}

const filesUnder = async (root: string): Promise<string[]> => {
  try {
    const entries = await readdir(root, { recursive: true, withFileTypes: true })
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** What a good export of DATE publishes, sorted: each table's dates relation and data, the archived raw body. */
export const PUBLISHED = [
  `_export_dates/assets/dt=${DATE}/dates.parquet`,
  `_export_dates/locations/dt=${DATE}/dates.parquet`,
  `_raw/assets/dt=${DATE}/body.csv.gz`,
  `assets/dt=${DATE}/data.parquet`,
  `locations/dt=${DATE}/data.parquet`,
]

/** Published objects (data, dates relations, raw archive), leaving out bookkeeping: run records, schemas, leases, uploads in progress. */
export const visibleObjects = async (out: string): Promise<string[]> =>
  (await filesUnder(out)).filter((f) => !/^_(runs|schemas|tmp|leases)\//.test(f))

export const readObject = (ws: Workspace, key: string): Promise<Buffer> => readFile(path.join(ws.out, key))

/** The bytes of the objects of the first, good export. */
const snapshot = async (ws: Workspace): Promise<Map<string, Buffer>> =>
  new Map(await Promise.all(PUBLISHED.map(async (key) => [key, await readObject(ws, key)] as const)))

/** A workspace with a good export of DATE in it. */
export const exportedWorkspace = async (tuning?: Tuning): Promise<{ ws: Workspace; good: Map<string, Buffer> }> => {
  const ws = await workspace(tuning)
  const first = await exportDate(ws, 'good run')
  expect(first.exitCode, first.stderr).toBe(0)
  return { ws, good: await snapshot(ws) }
}

export const requestsTo = (tableId: string, since: number): number =>
  emulator.requests.slice(since).filter((r) => r.path === `/rest/tables/${tableId}/csv`).length

export const rowsIn = async (ws: Workspace, name: string): Promise<{ rows: number; runs: number }> => {
  const [row] = await query(
    `SELECT count(*)::INTEGER AS rows, count(DISTINCT _export_run_id)::INTEGER AS runs FROM '${path.join(ws.out, name, `dt=${DATE}`, 'data.parquet')}'`,
  )
  return { rows: Number(row!.rows), runs: Number(row!.runs) }
}

export interface FailureExpectation {
  readonly code: ErrorCode
  readonly failureClass: FailureClass
  /** HTTP status shown to the operator and kept in the run record; absent for transport failures. */
  readonly status?: number
  /** Requests the run made for the table (every retry included). */
  readonly requests: number
  /** What the message must say besides the table, the status and a next step. */
  readonly message?: RegExp
  /** The whole run was refused at the token check: every table fails, none was requested. */
  readonly runLevel?: boolean
}

export interface FaultCase {
  readonly name: string
  readonly tuning?: Tuning
  /** Scripts the fault after the good export; may return a function that undoes it. */
  readonly arrange: () => undefined | (() => void)
}

/** Runs the good export, arranges the fault, runs again; returns what the second run did. */
export const runUnderFault = async (fault: FaultCase) => {
  const { ws, good } = await exportedWorkspace(fault.tuning)
  const since = emulator.requests.length
  const undo = fault.arrange()
  const started = Date.now()
  const result = await exportDate(ws, 'faulted run')
  const seconds = (Date.now() - started) / 1000
  undo?.()
  const record = await runRecordOf(ws, result)
  return { ws, good, result, record, assets: outcomeOf(record, ASSETS.name), since, seconds }
}

export const script =
  (target: string, ...faults: Fault[]) =>
  (): undefined => {
    emulator.faults.script(target, faults)
    return undefined
  }
export const always = (target: string, fault: Fault) => (): undefined => {
  emulator.faults.always(target, fault)
  return undefined
}
export const replaceAssets = (table: SavedTable) => () => {
  emulator.setTable(table)
  return () => emulator.setTable(assetsTable())
}

/** A fault that persists, with what the run must report about it. */
export type FailingCase = FaultCase & { readonly expected: FailureExpectation }

/**
 * The checks every persistent fault shares: the table fails, coded, with the requests expected; the operator
 * reads the table, the status and a next step; the other table is exported all the same (unless the whole run
 * was refused); nothing partial is visible and the previous good objects are byte for byte what they were.
 */
export const expectFailureKeepsData = async (fault: FailingCase): Promise<void> => {
  const { expected } = fault
  const { ws, good, result, assets, since } = await runUnderFault(fault)

  expect(result.exitCode).toBe(1)
  expect(assets).toMatchObject({
    status: 'failed',
    objects: [],
    error: { code: expected.code, failureClass: expected.failureClass },
  })
  expect(requestsTo(ASSETS.id, since)).toBe(expected.requests)
  if (expected.requests > 0) expect(assets.attempts).toBe(expected.requests)
  if (expected.status !== undefined) expect(assets.httpStatus).toBe(expected.status)
  if (expected.message) expect(assets.error?.message).toMatch(expected.message)

  // The operator reads which table, which status and what to do next.
  const failedLine = result.stderr.split('\n').find((l) => l.startsWith(`${ASSETS.name}: FAILED [${expected.code}]`))
  expect(failedLine, result.stderr).toBeDefined()
  if (!expected.runLevel) expect(failedLine).toContain(`table ${ASSETS.id}`)
  if (expected.status !== undefined && expected.status !== 200) {
    expect(failedLine).toContain(`HTTP ${expected.status}`)
  }
  // A run refused at the token check says its next step once, for the run, rather than under every table.
  const nextStep = expected.runLevel ? '^next step: \\S+' : `^${ASSETS.name}:   next step: \\S+`
  expect(result.stderr).toMatch(new RegExp(nextStep, 'm'))
  expect(result.stdout).toMatch(new RegExp(`^${ASSETS.name}\\s+FAILED ${expected.code}`, 'm'))

  // The other table is exported all the same, unless the whole run was refused.
  const locations = outcomeOf(await runRecordOf(ws, result), LOCATIONS.name)
  expect(locations.status).toBe(expected.runLevel ? 'failed' : 'succeeded')

  // Nothing partial is visible; the previous good objects are byte for byte what they were.
  expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
  expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
  for (const key of [`assets/dt=${DATE}/data.parquet`, `_raw/assets/dt=${DATE}/body.csv.gz`]) {
    expect((await readObject(ws, key)).equals(good.get(key)!), key).toBe(true)
  }
  expect(await rowsIn(ws, ASSETS.name)).toEqual({ rows: ASSET_ROWS, runs: 1 })
}
