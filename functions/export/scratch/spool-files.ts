/**
 * Names and sweeps the spool files of a run (record batches for a second pass, spooled workbooks). A killed
 * process (SIGKILL, out of memory, a Lambda timeout) never deletes its spool, and a warm Lambda keeps /tmp between
 * invocations, so each new spool file first sweeps away those of processes that are gone. A file's name carries
 * its process id: a file of a live process (this one and its threads included) is never touched, and one left by
 * an earlier process that had this same pid (a restarted Lambda runtime) is told apart by being older than this
 * process.
 */
import { randomUUID } from 'node:crypto'
import { readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { processIsAlive } from './live-process.ts'
import { makeFolder } from './make-folder.ts'

export const SpoolKind = {
  batches: { prefix: 'spool', suffix: '.bin' },
  workbook: { prefix: 'workbook', suffix: '.xlsx' },
} as const
export type SpoolKind = (typeof SpoolKind)[keyof typeof SpoolKind]

/** Added to a batches spool file's name for the table's key hashes, when they spill (normalize/row-key.ts). */
export const KEYS_SPILL_SUFFIX = '.keys'
/**
 * Added to a batches spool file's name for the part of a row group's copies not kept in memory
 * (parquet/batch-copies.ts): one file for each of the two groups in hand, the one being written and the next.
 */
export const GROUP_SPILL_SUFFIXES = ['.group', '.group2'] as const

/** `<prefix>-<pid>-<uuid><suffix>`; files named otherwise are not ours and are left alone. */
const SPOOL_NAME = /^(?:spool|workbook)-(\d+)-[0-9a-f-]{36}\.(?:bin(?:\.keys|\.group2?)?|xlsx(?:\.strings|\.ends)?)$/
/** The same for every thread of this process: what a thread of it spools is never older than this. */
const PROCESS_STARTED_MS = Date.now() - process.uptime() * 1000
/**
 * A pid that answers may belong to an unrelated process that reused it. A table ends within a day
 * (export.timeouts.tableSeconds is at most 86,400), so a spool file untouched for two days is dead whatever its pid.
 */
const STALE_SPOOL_MS = 2 * 24 * 60 * 60 * 1000

/** A fresh spool file path in `directory` (created if need be), after sweeping the files of dead processes. */
export const newSpoolFile = async (directory: string, kind: SpoolKind): Promise<string> => {
  await makeFolder(directory)
  // Best effort: a sweep that fails must not fail the table.
  await sweepDeadSpoolFiles(directory).catch(() => undefined)
  return path.join(directory, `${kind.prefix}-${process.pid}-${randomUUID()}${kind.suffix}`)
}

/** Removes the spool files in `directory` whose process is gone; returns their names. */
export const sweepDeadSpoolFiles = async (directory: string, now = Date.now()): Promise<string[]> => {
  const removed: string[] = []
  for (const name of await readdir(directory)) {
    const match = SPOOL_NAME.exec(name)
    if (match === null) continue
    const pid = Number(match[1])
    const file = path.join(directory, name)
    // Another run may sweep the same file at the same moment: every step tolerates its absence.
    const dead =
      pid === process.pid
        ? await untouchedSince(file, PROCESS_STARTED_MS)
        : !processIsAlive(pid) || (await untouchedSince(file, now - STALE_SPOOL_MS))
    if (!dead) continue
    await rm(file, { force: true })
    removed.push(name)
  }
  return removed
}

const untouchedSince = async (file: string, before: number): Promise<boolean> => {
  const info = await stat(file).catch(() => undefined)
  return info !== undefined && info.mtimeMs < before
}
