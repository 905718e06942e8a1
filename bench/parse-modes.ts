/**
 * The parse stage alone, in each of the places it can run, on one CSV file: its CPU time (all threads), wall time
 * and peak resident memory, one process per mode so that each starts cold.
 *
 * Usage: node bench/parse-modes.ts FILE [MODE...]   modes: inline, worker, chunks-1, chunks-2 (default: all four)
 */
import { spawnSync } from 'node:child_process'
import { createReadStream } from 'node:fs'
import { LimitsConfigSchema } from '../functions/export/core/config/schema.ts'
import { openParsedTable, type ParseThread } from '../functions/export/csv/parse-worker.ts'

/** The configuration's default limits. */
const limits = LimitsConfigSchema.parse({})

const MODES = ['inline', 'worker', 'chunks-1', 'chunks-2'] as const
const [file, ...asked] = process.argv.slice(2)
if (file === undefined) {
  console.error('Usage: node bench/parse-modes.ts FILE [inline|worker|chunks-1|chunks-2 ...]')
  process.exit(2)
}

const threadOf = (mode: string): ParseThread =>
  mode.startsWith('chunks-') ? { workers: Number(mode.slice('chunks-'.length)) } : (mode as ParseThread)

/** In a child: parses the file in one mode and prints one JSON line. */
const measure = async (mode: string) => {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const options = { tableId: 'bench', shortRows: 'fail', encoding: 'utf-8', invalidBytes: 'fail', limits } as const
  const parsed = await openParsedTable(createReadStream(file, { highWaterMark: 64 * 1024 }), options, threadOf(mode))
  let rows = 0
  for await (const batch of parsed.batches) {
    rows += batch.rowCount
    parsed.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
  }
  await parsed.close()
  const used = process.cpuUsage(cpu)
  const seconds = (performance.now() - started) / 1000
  const peakRssMiB = process.resourceUsage().maxRSS / 1024
  console.log(JSON.stringify({ mode, rows, cpuSeconds: (used.user + used.system) / 1e6, seconds, peakRssMiB }))
}

if (process.env.BENCH_PARSE_MODE) await measure(process.env.BENCH_PARSE_MODE)
else {
  for (const mode of asked.length > 0 ? asked : MODES) {
    const child = spawnSync(process.execPath, [import.meta.filename, file], {
      env: { ...process.env, BENCH_PARSE_MODE: mode },
      encoding: 'utf8',
    })
    process.stdout.write(child.status === 0 ? child.stdout : `${mode}: failed\n${child.stderr}`)
  }
}
