/**
 * `mkdir -p` bounded by the path's depth. Node's recursive mkdir spins forever under /proc and similar file
 * systems: mkdir answers ENOENT for a parent that exists, and Node retries that parent endlessly. Here each
 * missing level is created once, from the top, and the first refusal is the answer.
 */
import { mkdir, stat } from 'node:fs/promises'
import path from 'node:path'

export const makeFolder = async (folder: string): Promise<void> => {
  const missing: string[] = []
  for (let current = path.resolve(folder); ; ) {
    const found = await stat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    // mkdir's own EEXIST names the file that stands where a folder must be.
    if (found && !found.isDirectory()) await mkdir(current)
    if (found) break
    missing.push(current)
    const parent = path.dirname(current)
    if (parent === current) break
    current = parent
  }
  for (const level of missing.reverse()) {
    // Another run may create the same level at the same moment.
    await mkdir(level).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
  }
}
