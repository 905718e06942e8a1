/**
 * The error codes the docs quote are the program's: every `error [CODE]` line of the README and docs/, and every
 * code named in the error tables of failure-behaviour.md, is a code some part of the program raises; and every
 * code the exporter has is documented somewhere.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { EmulatorErrorCode } from '../../emulator/errors.ts'
import { ErrorCode } from '../../functions/export/core/errors/codes.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** The bench's own refusal to time on a loaded machine (bench/load.ts). */
const BENCH_CODES = ['BENCH_LOADED']
const PROGRAM_CODES = new Set<string>([
  ...Object.values(ErrorCode),
  ...Object.values(EmulatorErrorCode),
  ...BENCH_CODES,
])

const pages = async (): Promise<{ name: string; text: string }[]> => {
  const docs = (await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
  return Promise.all(
    ['README.md', ...docs].map(async (name) => ({ name, text: await readFile(path.join(ROOT, name), 'utf8') })),
  )
}

describe('the error codes the docs quote', () => {
  it('are codes the program has, in every quoted error [CODE] line', async () => {
    const quoted = (await pages()).flatMap(({ name, text }) =>
      [...text.matchAll(/error \[([A-Z][A-Z0-9_]*)\]/g)].map((m) => ({ name, code: m[1]! })),
    )
    expect(quoted.length).toBeGreaterThan(10)
    // `error [CODE]` is the docs' own placeholder for the shape of the line.
    expect(quoted.filter(({ code }) => code !== 'CODE' && !PROGRAM_CODES.has(code))).toEqual([])
  })

  it('are codes the program has, in the tables of failure-behaviour.md', async () => {
    const text = await readFile(path.join(ROOT, 'docs/failure-behaviour.md'), 'utf8')
    const rows = text.split('\n').filter((line) => line.startsWith('|'))
    // The limits table names the workbook reader's constants (`MAX_SHEET_ROWS`...), which are not codes.
    const named = rows
      .flatMap((row) => [...row.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((m) => m[1]!))
      .filter((name) => !name.startsWith('MAX_'))
    expect(named.length).toBeGreaterThan(30)
    const unknown = named.filter((code) => !PROGRAM_CODES.has(code))
    expect(unknown).toEqual([])
  })

  it('document every code of the exporter', async () => {
    const all = (await pages()).map((p) => p.text).join('\n')
    expect(Object.values(ErrorCode).filter((code) => !all.includes(code))).toEqual([])
  })
})
