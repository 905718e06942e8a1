/**
 * The house rule that a source file stays at most MAX_LINES lines long: a longer file is split along a seam that
 * reads well, never squeezed. Every TypeScript or JavaScript module of the source folders is checked, tests and
 * their support included; generated folders (node_modules, cdk.out, CDK snapshots) are not source.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const MAX_LINES = 400
const SOURCE_FOLDERS = ['.ci', 'bench', 'emulator', 'functions', 'infra', 'integ', 'test']
const MODULE = /\.(ts|mts|cts|mjs|cjs|js)$/
const GENERATED = new Set(['node_modules', 'cdk.out', 'dist'])

const modulesUnder = (folder: string): string[] =>
  readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(folder, entry.name)
    if (entry.isDirectory()) {
      return GENERATED.has(entry.name) || entry.name.endsWith('.snapshot') ? [] : modulesUnder(relative)
    }
    return entry.isFile() && MODULE.test(entry.name) ? [relative] : []
  })

const lineCount = (file: string): number => readFileSync(path.join(ROOT, file), 'utf8').trimEnd().split('\n').length

describe('every source file', () => {
  const files = SOURCE_FOLDERS.flatMap(modulesUnder)

  it('is found in the source folders (the check reads the files it means to)', () => {
    expect(files).toContain(path.join('functions', 'export', 'xlsx', 'xml-scanner.ts'))
    expect(files).toContain(path.join('test', 'unit', 'file-length.test.ts'))
    expect(files.some((file) => file.includes('node_modules'))).toBe(false)
  })

  it(`is at most ${MAX_LINES} lines long`, () => {
    const offenders = files
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`)
    expect(offenders).toEqual([])
  })
})
