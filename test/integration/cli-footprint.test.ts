/**
 * What an export from a real service loads: the path's own libraries, and not the AWS SDK clients (the Lambda's
 * alone), the stand-in's workbook writer (exceljs) or DuckDB (the query commands'). Each of those cost a local
 * export tens of MiB of resident memory and start-up time at every run; the benchmark's memory figures are taken
 * from this very command.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, DemoTableId, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'

const PRELOAD = path.resolve(import.meta.dirname, '../support/loaded-packages.mjs')

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())

/** The packages a CLI run loaded, in every thread it ran (this small table is parsed on the main thread). */
const packagesLoadedBy = async (argv: readonly string[]): Promise<Set<string>> => {
  const list = path.join(await tempDir(), 'packages.txt')
  const result = await runCliProcess(argv, {
    NODE_OPTIONS: `--import=${PRELOAD}`,
    LOADED_PACKAGES_FILE: list,
  })
  expect(result.stderr).not.toMatch(/error \[/)
  expect(result.exitCode).toBe(0)
  return new Set((await readFile(list, 'utf8')).split('\n').filter(Boolean))
}

describe('a local export from a service', () => {
  it('loads the parser and the Parquet writer, and no AWS SDK client, workbook writer or DuckDB', async () => {
    const packages = await packagesLoadedBy([
      'export',
      '--base-url',
      emulator.baseUrl,
      '--table',
      `${DemoTableId.DEVICES}=devices`,
      '--token-file',
      await tokenFile(DEMO_TOKEN),
      '--out',
      await tempDir(),
      '--date',
      '2026-05-04',
    ])
    expect(packages).toContain('csv-parse')
    expect(packages).toContain('hyparquet-writer')
    const heavy = [...packages].filter((name) =>
      /^(@aws-sdk\/client-|@aws-sdk\/lib-storage$|@aws-lambda-powertools\/|exceljs$|@duckdb\/)/.test(name),
    )
    expect(heavy).toEqual([])
  })
})
