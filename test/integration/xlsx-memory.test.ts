/**
 * A workbook streams through in bounded memory: the real runner (`npm start --format xlsx` in a child process)
 * exports a 300,000-row workbook of the device table, served by the stand-in from another process, with the
 * memory probe preloaded. Its peak resident memory (every thread together) stays under 400 MB. Timings are
 * never asserted; `npm run bench -- --format xlsx` measures them.
 */
import { describe, expect, it } from 'vitest'
import { benchInput, benchWorkbook } from '../../bench/generate.ts'
import { tempDir } from '../support/cli.ts'
import { exportWithProbe } from '../support/memory-probe.ts'

const MB = 1e6
/** About 300,000 rows of the device table (224 bytes a row as CSV). */
const CSV_MEGABYTES = 67.2

describe('a workbook streams through in bounded memory', () => {
  it('exports 300,000 rows from a workbook under 400 MB of peak resident memory', async () => {
    const inputs = await tempDir('inventory-xlsx-memory-input-')
    const input = await benchInput(inputs, CSV_MEGABYTES)
    const workbook = await benchWorkbook(input)
    expect(input.rows).toBeGreaterThanOrEqual(300_000)
    const { exitCode, stdout, stderr, peakRssBytes } = await exportWithProbe(input.file, [], 'bench=devices', workbook)
    expect(exitCode, stderr.slice(-2000)).toBe(0)
    expect(stdout).toMatch(new RegExp(`devices\\s+ok\\s+${input.rows.toLocaleString('en-US')}\\s.*\\sxlsx\\s`))
    expect(peakRssBytes).toBeGreaterThan(0)
    expect(peakRssBytes).toBeLessThan(400 * MB)
  }, 600_000)
})
