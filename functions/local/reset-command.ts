/**
 * `npm run reset`: deletes the local warehouse folder, so the next `npm start` begins with no history (no earlier
 * dates, no schema registry, no guard baselines). A recursive delete named by a flag is dangerous, so it deletes
 * only a folder every entry of which this tool wrote: its `_schemas` registry, `_runs`, `_raw`, `_export_dates` and `_tmp`, and one
 * folder per registered table holding only `dt=` partitions. Anything else there and it refuses, naming it.
 */
import { readdir, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  EXPORT_DATES_FOLDER,
  LEASES_FOLDER,
  RAW_FOLDER,
  RUNS_FOLDER,
  SCHEMAS_FOLDER,
  UsageError,
} from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { flagHelp, HELP_FLAG, parseFlags } from './flags.ts'
import type { TerminalOutput } from './terminal.ts'
import { localWarehouseFolder } from './warehouse-target.ts'

const RESET_FLAGS = {
  out: { type: 'string', value: 'DIR', help: 'the warehouse folder to delete (default ./warehouse)' },
  help: HELP_FLAG,
} as const

const RESET_USAGE = `Usage: npm run reset -- [--out DIR]

Deletes the local warehouse folder that npm start wrote: every table, date, run record and the schema registry,
so the next export starts afresh. It refuses a folder holding anything this tool did not write.

${flagHelp(RESET_FLAGS)}

Exit status: 0 deleted (or nothing there); 2 bad usage, or the folder does not look like a warehouse.`

/** Folders of the warehouse's own bookkeeping, next to the table folders. */
const OWN_FOLDERS = new Set([SCHEMAS_FOLDER, RUNS_FOLDER, RAW_FOLDER, EXPORT_DATES_FOLDER, LEASES_FOLDER, '_tmp'])
const PARTITION = /^dt=\d{4}-\d{2}-\d{2}$/

export const runResetCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { values } = parseFlags(RESET_FLAGS, argv)
  if (values.help) {
    output.out(RESET_USAGE)
    return ExitCode.OK
  }
  const root = path.resolve(
    localWarehouseFolder(values.out, {
      command: 'npm run reset',
      hint: 'npm run reset deletes only a local folder npm start wrote; it deletes nothing in S3',
    }),
  )
  const found = await stat(root).catch(() => undefined)
  if (found === undefined) {
    output.out(`nothing to reset: ${root} does not exist`)
    return ExitCode.OK
  }
  const problem = await notAWarehouse(root, found.isDirectory())
  if (problem) {
    throw new UsageError(
      `refusing to delete ${root}: ${problem}`,
      'point --out at a warehouse folder npm start wrote, or delete the folder yourself',
    )
  }
  await rm(root, { recursive: true })
  output.out(`deleted the warehouse ${root}; npm start exports afresh`)
  return ExitCode.OK
}

/** Why `root` is not a folder this tool wrote, or undefined when every entry in it is one of ours. */
const notAWarehouse = async (root: string, isDirectory: boolean): Promise<string | undefined> => {
  if (!isDirectory) return 'it is not a folder'
  // Never a folder that holds the user's other work, whatever it contains.
  const guarded = [os.homedir(), process.cwd(), path.parse(root).root]
  if (guarded.includes(root)) return 'it is the home, current or root folder'
  const entries = await readdir(root, { withFileTypes: true })
  if (!entries.some((e) => e.name === SCHEMAS_FOLDER && e.isDirectory())) {
    return `it has no ${SCHEMAS_FOLDER} folder (the schema registry every export writes)`
  }
  const tables = new Set(
    (await readdir(path.join(root, SCHEMAS_FOLDER))).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)),
  )
  for (const entry of entries) {
    if (OWN_FOLDERS.has(entry.name) && entry.isDirectory()) continue
    if (!entry.isDirectory() || !tables.has(entry.name)) return `"${entry.name}" is not something an export writes`
    const inside = await readdir(path.join(root, entry.name))
    const stranger = inside.find((name) => !PARTITION.test(name))
    if (stranger !== undefined) return `"${entry.name}/${stranger}" is not an export date's partition`
  }
  return undefined
}
