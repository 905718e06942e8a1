/**
 * The run's check of the OS temp folder (test/support/temp-check.ts): what it names as left behind, and that no
 * code builds a path from a hard-coded /tmp, which would escape the run's own folder (TMPDIR).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../support/cli.ts'
import { leftovers } from '../support/temp-check.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const CODE_FOLDERS = ['bench', 'emulator', 'functions', 'infra', 'integ', 'test']
const CODE = /\.(ts|mts|cts|mjs|cjs|js|py)$/
const SKIPPED = /(^|\/)(node_modules|cdk\.out|dist|[^/]*\.snapshot)(\/|$)/
/** The folder /tmp, or a path under it, between quotes: a path in the OS temp folder that TMPDIR does not move. */
const HARD_CODED_TMP = /['"`]\/tmp(['"`/])/

describe('what a run left in the OS temp folder', () => {
  it('names every file and folder still in the run folder, folders with their contents, sorted', async () => {
    const root = await tempDir('temp-check-')
    mkdirSync(path.join(root, 'key-counter-Zx1', 'spool'), { recursive: true })
    writeFileSync(path.join(root, 'key-counter-Zx1', 'spool', 'a.bin'), '')
    writeFileSync(path.join(root, 'fault-matrix-out-q'), '')
    expect(leftovers(root)).toEqual([
      'fault-matrix-out-q',
      'key-counter-Zx1',
      'key-counter-Zx1/spool',
      'key-counter-Zx1/spool/a.bin',
    ])
  })

  it('names nothing when the run folder is empty', async () => {
    expect(leftovers(await tempDir('temp-check-'))).toEqual([])
  })
})

describe('the paths the code builds', () => {
  const files = CODE_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .map((file) => path.join(folder, file).split(path.sep).join('/'))
      .filter((file) => CODE.test(file) && !SKIPPED.test(file)),
  )

  it('are read from every code folder (the check reads the files it means to)', () => {
    expect(files).toContain('test/support/temp-root.ts')
    expect(files).toContain('functions/export/path/run.ts')
  })

  it('never put a file in a hard-coded /tmp, which the run folder (TMPDIR) does not catch', () => {
    const offenders = files.filter((file) => HARD_CODED_TMP.test(readFileSync(path.join(ROOT, file), 'utf8')))
    expect(offenders).toEqual([])
  })
})
