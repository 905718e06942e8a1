/** Runs the real runner (`npm start`) in a child process with the memory probe preloaded, against a CSV file served by the stand-in from another process. */
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DEMO_TOKEN } from '../../emulator/index.ts'
import { NODE_RUNTIME_FLAGS } from '../../functions/export/core/constants.ts'
import { tempDir } from './cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

export interface MemoryFigures {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  readonly peakRssBytes: number
  /** The largest peak heap of a worker thread (the parse thread), 0 when none ran. */
  readonly threadHeapBytes: number
}

/**
 * `npm start` against a stand-in in another process, with the memory probe preloaded: with the V8 flags the npm
 * scripts and the Lambda run the export with (NODE_RUNTIME_FLAGS), then `nodeFlags`.
 */
export const exportWithProbe = async (
  csvFile: string,
  nodeFlags: string[] = [],
  table = 'bench=devices',
  workbook?: { readonly file: string },
): Promise<MemoryFigures> => {
  const served = workbook === undefined ? [csvFile] : [csvFile, workbook.file]
  const server = spawn(process.execPath, [path.join(ROOT, 'bench/serve.ts'), ...served], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const [line] = (await once(server.stdout, 'data')) as [Buffer]
    const dir = await tempDir('inventory-memory-')
    const token = path.join(dir, 'token')
    await writeFile(token, DEMO_TOKEN)
    const args = [
      ...NODE_RUNTIME_FLAGS,
      ...nodeFlags,
      '--import',
      path.join(ROOT, 'bench/report-rss.ts'),
      path.join(ROOT, 'functions/local/cli.mjs'),
      'export',
      '--base-url',
      line.toString('utf8').trim(),
      '--table',
      table,
      ...(workbook === undefined ? [] : ['--format', 'xlsx']),
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
    const figures = (name: string) => [...stderr.matchAll(new RegExp(`${name}=(\\d+)`, 'g'))].map((m) => Number(m[1]))
    return {
      exitCode,
      stdout,
      stderr,
      peakRssBytes: (figures('BENCH_MAX_RSS_KB')[0] ?? Number.NaN) * 1024,
      threadHeapBytes: Math.max(0, ...figures('BENCH_THREAD_PEAK_HEAP_USED')),
    }
  } finally {
    server.kill('SIGTERM')
  }
}
