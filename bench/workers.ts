/**
 * The export measured at set numbers of worker threads (`export.workerThreads`, 1 and 2 by default) beside the
 * default `auto`, which follows the machine's cores: a configuration file per setting, the same table, source and
 * flags otherwise, so the rows of one bench run differ in the threads alone.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'

/** The settings measured besides `auto`, from `--workers` (a comma-separated list of numbers). */
export const workerSettings = (list: string): number[] =>
  [...new Set(list.split(',').filter(Boolean).map(Number))].filter((n) => Number.isInteger(n) && n >= 0)

/** `--config FILE` arguments for an export of the bench table with `workers` worker threads. */
export const workersConfig = async (
  workDir: string,
  baseUrl: string,
  workers: number,
  format: 'csv' | 'xlsx',
): Promise<string[]> => {
  const file = path.join(workDir, `workers-${workers}-${format}.json`)
  const config = {
    source: { baseUrl },
    tables: [{ id: 'bench', name: 'bench_devices', format }],
    export: { workerThreads: workers },
  }
  await writeFile(file, JSON.stringify(config))
  return ['--config', file]
}

/** A configuration that exports the bench table as an Iceberg table, with the default workers. */
export const icebergConfig = async (workDir: string, baseUrl: string): Promise<string[]> => {
  const file = path.join(workDir, 'iceberg.json')
  const config = { source: { baseUrl }, tables: [{ id: 'bench', name: 'bench_devices', tableFormat: 'iceberg' }] }
  await writeFile(file, JSON.stringify(config))
  return ['--config', file]
}

/** The figure's key in the JSON line and its name on the terminal. */
export const workersKey = (workers: number): [key: string, name: string] => [
  `exportWorkers${workers}`,
  `b. export, ${workers} worker${workers === 1 ? '' : 's'}`,
]
