/**
 * `--out` is checked before anything is downloaded: a file in its place or a folder that cannot be written would
 * otherwise fail only after every table had been fetched. Node's recursive mkdir can spin on /proc, so the check
 * walks up to the nearest existing folder itself and writes a probe file there.
 */
import { randomUUID } from 'node:crypto'
import { open, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from '../export/index.ts'

const WRITABLE_FOLDER =
  'give --out a folder you can write (it is created when missing), or leave it out for ./warehouse'

export const checkWarehouseFolder = async (outDir: string): Promise<void> => {
  let folder = path.resolve(outDir)
  for (;;) {
    const found = await stat(folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw new UsageError(`--out ${outDir} cannot be used: ${error.message}`, WRITABLE_FOLDER)
    })
    if (found && !found.isDirectory())
      throw new UsageError(`--out ${outDir} is not a folder: ${folder} is a file`, WRITABLE_FOLDER)
    if (found) break
    const parent = path.dirname(folder)
    if (parent === folder) break
    folder = parent
  }
  const probe = path.join(folder, `.write-check-${randomUUID()}`)
  try {
    await (await open(probe, 'wx')).close()
  } catch (error) {
    throw new UsageError(`--out ${outDir} cannot be written: ${(error as Error).message}`, WRITABLE_FOLDER)
  }
  await rm(probe, { force: true })
}
