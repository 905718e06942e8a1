/** The order `npm test` starts its files in (test/support/slow-first.ts): its list of slow files is still true. */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SLOW_FILES, slowRank } from '../support/slow-first.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('the slowest files first', () => {
  it('names only test files that exist, each once', () => {
    expect(SLOW_FILES.filter((file) => !existsSync(path.join(ROOT, file)) || !file.endsWith('.test.ts'))).toEqual([])
    expect(new Set(SLOW_FILES).size).toBe(SLOW_FILES.length)
  })

  it('puts a listed file before every other file, in the order of the list', () => {
    expect(slowRank(SLOW_FILES[0]!)).toBe(0)
    expect(slowRank(SLOW_FILES[1]!)).toBe(1)
    expect(slowRank('test/unit/slow-first.test.ts')).toBe(SLOW_FILES.length)
  })
})
