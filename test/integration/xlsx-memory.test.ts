/**
 * A workbook streams through in bounded memory: the real runner (`npm start --format xlsx` in a child process)
 * exports a 300,000-row workbook of the device table, served by the stand-in from another process, with the
 * memory probe preloaded. Its peak resident memory (every thread together) stays under 400 MB. Timings are
 * never asserted; `npm run bench -- --format xlsx` measures them.
 */
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { benchInput, benchWorkbook } from '../../bench/generate.ts'
import { DEMO_TOKEN } from '../../emulator/index.ts'
import { tempDir } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MB = 1e6
/** About 300,000 rows of the device table (224 bytes a row as CSV). */
const CSV_MEGABYTES = 67.2

describe('a workbook streams through in bounded memory', () => {
  it('exports 300,000 rows from a workbook under 400 MB of peak resident memory', async () => {
    const inputs = await tempDir('inventory-xlsx-memory-input-')
    const input = await benchInput(inputs, CSV_MEGABYTES)
    const workbook = await benchWorkbook(input)
    expect(input.rows).toBeGreaterThanOrEqual(300_000)
    const server = spawn(process.execPath, [path.join(ROOT, 'bench/serve.ts'), input.file, workbook.file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      const [line] = (await once(server.stdout, 'data')) as [Buffer]
      const dir = await tempDir('inventory-xlsx-memory-')
      const token = path.join(dir, 'token')
      await writeFile(token, DEMO_TOKEN)
      const args = [
        '--import',
        path.join(ROOT, 'bench/report-rss.ts'),
        path.join(ROOT, 'functions/local/cli.ts'),
        'export',
        '--base-url',
        line.toString('utf8').trim(),
        '--table',
        'bench=devices',
        '--format',
        'xlsx',
        '--token-file',
        token,
        '--out',
        path.join(dir, 'warehouse'),
      ]
      const { exitCode, stdout, stderr } = await new Promise<{ exitCode: number; stdout: string; stderr: string }>(
        (resolve) =>
          execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
            resolve({ exitCode: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
          ),
      )
      expect(exitCode, stderr.slice(-2000)).toBe(0)
      expect(stdout).toMatch(new RegExp(`devices\\s+ok\\s+${input.rows.toLocaleString('en-US')}\\s.*\\sxlsx\\s`))
      const peakRss = Number(/BENCH_MAX_RSS_KB=(\d+)/.exec(stderr)?.[1]) * 1024
      expect(peakRss).toBeGreaterThan(0)
      expect(peakRss).toBeLessThan(400 * MB)
    } finally {
      server.kill('SIGTERM')
    }
  }, 600_000)
})
