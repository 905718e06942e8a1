/**
 * How the CLI starts: with Node's compile cache on (functions/local/cli.mjs), so a start after the first skips
 * stripping types and compiling the sources; the variable Node documents for it turns it off.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCliProcess, tempDir } from '../support/cli.ts'

/** Files under `folder`, at any depth. */
const filesUnder = async (folder: string): Promise<string[]> =>
  (await readdir(folder, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name)

describe('the CLI start', () => {
  it("keeps the compiled modules in the compile cache, in the OS temporary folder's node-compile-cache", async () => {
    const temporary = await tempDir()
    const result = await runCliProcess(['--help'], { TMPDIR: temporary, NODE_COMPILE_CACHE: undefined })
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/^Usage: npm start/)
    expect((await filesUnder(path.join(temporary, 'node-compile-cache'))).length).toBeGreaterThan(0)
  })

  it('takes an empty NODE_COMPILE_CACHE as unset, not as the current folder', async () => {
    const temporary = await tempDir()
    const result = await runCliProcess(['--help'], { TMPDIR: temporary, NODE_COMPILE_CACHE: '' })
    expect(result.exitCode).toBe(0)
    expect((await filesUnder(path.join(temporary, 'node-compile-cache'))).length).toBeGreaterThan(0)
  })

  it('keeps it where NODE_COMPILE_CACHE points, when set', async () => {
    const cache = await tempDir()
    const result = await runCliProcess(['--help'], { NODE_COMPILE_CACHE: cache })
    expect(result.exitCode).toBe(0)
    expect((await filesUnder(cache)).length).toBeGreaterThan(0)
  })

  it('writes no cache with NODE_DISABLE_COMPILE_CACHE=1, and runs the same', async () => {
    const cache = await tempDir()
    const result = await runCliProcess(['--help'], { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: '1' })
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/^Usage: npm start/)
    expect(await filesUnder(cache)).toEqual([])
  })
})
