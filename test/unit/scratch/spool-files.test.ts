import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readdir, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { newSpoolFile, SpoolKind, sweepDeadSpoolFiles } from '../../../functions/export/scratch/spool-files.ts'
import { tempDir } from '../../support/cli.ts'

/** The pid of a process that has already exited, as a killed run's is. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ['-e', ''])
  return child.pid!
}

const spoolName = (pid: number, prefix = 'spool', suffix = '.bin') => `${prefix}-${pid}-${randomUUID()}${suffix}`

const touch = async (folder: string, name: string): Promise<string> => {
  await writeFile(path.join(folder, name), 'spooled bytes')
  return name
}

describe('the spool sweep', () => {
  it('removes the spool files of a process that is gone and keeps those of live processes', async () => {
    const folder = await tempDir('spool-sweep-')
    const own = await touch(folder, path.basename(await newSpoolFile(folder, SpoolKind.batches)))
    const dead = await touch(folder, spoolName(deadPid()))
    const deadWorkbook = await touch(folder, spoolName(deadPid(), 'workbook', '.xlsx'))
    // A workbook's shared strings spilled beside it (xlsx/string-table.ts).
    const deadStrings = await touch(folder, `${deadWorkbook}.strings`)
    const deadEnds = await touch(folder, `${deadWorkbook}.ends`)
    // A table's key hashes spilled beside its batches spool (normalize/row-key.ts).
    const deadKeys = await touch(folder, `${dead}.keys`)
    const live = await touch(folder, spoolName(process.ppid))
    const foreign = await touch(folder, 'notes.txt')

    expect((await sweepDeadSpoolFiles(folder)).sort()).toEqual(
      [dead, deadWorkbook, deadStrings, deadEnds, deadKeys].sort(),
    )
    expect((await readdir(folder)).sort()).toEqual([foreign, live, own].sort())
  })

  it('removes a file of an earlier process that had this pid, as a restarted Lambda runtime can', async () => {
    const folder = await tempDir('spool-sweep-')
    const earlier = await touch(folder, spoolName(process.pid))
    const beforeThisProcess = new Date(Date.now() - process.uptime() * 1000 - 60_000)
    await utimes(path.join(folder, earlier), beforeThisProcess, beforeThisProcess)
    // Written since this process started: another thread's, say.
    const current = await touch(folder, spoolName(process.pid))

    expect(await sweepDeadSpoolFiles(folder)).toEqual([earlier])
    expect(await readdir(folder)).toEqual([current])
  })

  it('removes a file untouched for two days even when its pid now answers, as a reused pid can', async () => {
    const folder = await tempDir('spool-sweep-')
    const old = await touch(folder, spoolName(process.ppid))
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000 - 60_000)
    await utimes(path.join(folder, old), twoDaysAgo, twoDaysAgo)
    const recent = await touch(folder, spoolName(process.ppid))

    expect(await sweepDeadSpoolFiles(folder)).toEqual([old])
    expect(await readdir(folder)).toEqual([recent])
  })

  it('sweeps before it names a new spool file, in a folder it creates if need be', async () => {
    const folder = path.join(await tempDir('spool-sweep-'), 'nested', 'spool')
    const first = await newSpoolFile(folder, SpoolKind.workbook)
    await touch(folder, spoolName(deadPid()))

    const second = await newSpoolFile(folder, SpoolKind.workbook)

    expect(path.basename(second)).toMatch(new RegExp(`^workbook-${process.pid}-[0-9a-f-]{36}\\.xlsx$`))
    expect(second).not.toBe(first)
    expect(await readdir(folder)).toEqual([])
  })
})
