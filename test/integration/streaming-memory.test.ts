import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { benchInput } from '../../bench/generate.ts'
import { DEMO_TOKEN } from '../../emulator/index.ts'
import { tempDir } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

interface MemoryFigures {
  readonly exitCode: number
  readonly stdout: string
  readonly peakRssBytes: number
  readonly peakHeapUsedBytes: number
  readonly peakExternalBytes: number
}

/** `npm start` against a stand-in in another process, with the memory probe preloaded. */
const exportWithProbe = async (csvFile: string, nodeFlags: string[] = []): Promise<MemoryFigures> => {
  const server = spawn(process.execPath, [path.join(ROOT, 'bench/serve.ts'), csvFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const [line] = (await once(server.stdout, 'data')) as [Buffer]
    const dir = await tempDir('inventory-memory-')
    const token = path.join(dir, 'token')
    await writeFile(token, DEMO_TOKEN)
    const args = [
      ...nodeFlags,
      '--import',
      path.join(ROOT, 'bench/report-rss.ts'),
      path.join(ROOT, 'functions/local/cli.ts'),
      'export',
      '--base-url',
      line.toString('utf8').trim(),
      '--table',
      'bench=devices',
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
    const figure = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(stderr)?.[1] ?? Number.NaN)
    return {
      exitCode,
      stdout,
      peakRssBytes: figure('BENCH_MAX_RSS_KB') * 1024,
      peakHeapUsedBytes: figure('BENCH_PEAK_HEAP_USED'),
      peakExternalBytes: figure('BENCH_PEAK_EXTERNAL'),
    }
  } finally {
    server.kill('SIGTERM')
  }
}

let small: MemoryFigures
let large: MemoryFigures
let largeRows: number
let largeFile: string

beforeAll(async () => {
  const inputs = await tempDir('inventory-memory-input-')
  const smallInput = await benchInput(inputs, 45)
  const largeInput = await benchInput(inputs, 90)
  largeRows = largeInput.rows
  largeFile = largeInput.file
  small = await exportWithProbe(smallInput.file)
  large = await exportWithProbe(largeInput.file)
}, 240_000)

describe('a table streams through in bounded memory', () => {
  it('exports 200,000 and 400,000 rows', () => {
    expect([small.exitCode, large.exitCode]).toEqual([0, 0])
    expect(large.stdout).toMatch(new RegExp(`devices\\s+ok\\s+${largeRows.toLocaleString('en-US')}`))
    expect(largeRows).toBeGreaterThanOrEqual(400_000)
  })

  it('needs no more memory for twice the rows: heap, buffers and resident memory stay within 25%', () => {
    expect(large.peakHeapUsedBytes).toBeLessThan(small.peakHeapUsedBytes * 1.25)
    expect(large.peakExternalBytes).toBeLessThan(small.peakExternalBytes * 1.25 + 16 * 2 ** 20)
    expect(large.peakRssBytes).toBeLessThan(small.peakRssBytes * 1.25)
  })

  it('fits a 90 MB table in a 128 MiB heap: what it keeps does not grow with the table', async () => {
    const capped = await exportWithProbe(largeFile, ['--max-old-space-size=128'])
    expect(capped.exitCode).toBe(0)
    expect(capped.stdout).toMatch(/devices\s+ok/)
  }, 120_000)
})
