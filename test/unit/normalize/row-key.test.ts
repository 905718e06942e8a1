/**
 * The key counter: empty and repeated keys counted exactly, with the same counts whether the key hashes are held
 * in memory or, past a number of distinct keys, spilled to the spool disk and counted there in slices.
 */
import { existsSync, mkdtempSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { KeyCounter } from '../../../functions/export/normalize/row-key.ts'
import { batchesOf } from '../../support/encoder.ts'

const spillPath = () => path.join(mkdtempSync(path.join(os.tmpdir(), 'key-counter-')), 'spool-1.bin.keys')

/** The counts written out with strings: a row with an empty key cell is empty, else a repeat of any earlier key. */
const expected = (records: readonly string[][], key: readonly number[]) => {
  const seen = new Set<string>()
  let emptyKeys = 0
  let duplicateKeys = 0
  for (const record of records) {
    const cells = key.map((index) => record[index]!)
    if (cells.some((cell) => cell === '')) emptyKeys++
    else if (seen.has(JSON.stringify(cells))) duplicateKeys++
    else seen.add(JSON.stringify(cells))
  }
  return { emptyKeys, duplicateKeys }
}

const count = (records: readonly string[][], key: readonly number[], maxHeld: number, file = spillPath()) => {
  const counter = new KeyCounter(
    key.map((index) => `c${index}`),
    key,
    file,
    maxHeld,
  )
  for (const batch of batchesOf(records, 3, 7)) counter.observe(batch)
  const spilled = counter.spilled
  const report = counter.report()
  counter.close()
  return { report, spilled }
}

const cell = fc.oneof(fc.constant(''), fc.constantFrom('a', 'b', 'ab', 'Grüße'), fc.stringMatching(/^[a-z0-9]{1,3}$/))
const rows = fc.array(fc.tuple(cell, cell, cell), { maxLength: 400 })
const keys = fc.constantFrom([0], [1, 2], [2, 0, 1])

describe('counting empty and repeated keys', () => {
  it('counts exactly, held in memory or spilled to disk past a few distinct keys', () => {
    fc.assert(
      fc.property(rows, keys, fc.integer({ min: 1, max: 40 }), (records, key, maxHeld) => {
        const want = expected(records, key)
        const held = count(records, key, Number.MAX_SAFE_INTEGER)
        const spilled = count(records, key, maxHeld)

        expect(held.report).toMatchObject(want)
        expect(spilled.report).toMatchObject(want)
        expect(held.spilled).toBe(false)
      }),
      { numRuns: 200 },
    )
  })

  it('writes 8 bytes a keyed row to the spill file once past maxHeld, and removes it on close', () => {
    const records = Array.from({ length: 5_000 }, (_, i) => [String(i % 1_500), i % 10 === 0 ? '' : 'x', 'y'])
    const file = spillPath()
    const counter = new KeyCounter(['id', 'flag'], [0, 1], file, 100)
    for (const batch of batchesOf(records, 3, 64)) counter.observe(batch)

    expect(counter.spilled).toBe(true)
    expect(counter.report()).toEqual({ columns: ['id', 'flag'], ...expected(records, [0, 1]) })
    // Every row with a whole key went to disk, the first 100 distinct ones when the counter spilled.
    expect(statSync(file).size).toBe(8 * (records.length - expected(records, [0, 1]).emptyKeys))
    counter.close()
    expect(existsSync(file)).toBe(false)
  })

  it('writes nothing for a table with fewer distinct keys than maxHeld', () => {
    const file = spillPath()
    const { report, spilled } = count(
      Array.from({ length: 300 }, (_, i) => [String(i % 50), 'x', 'y']),
      [0],
      100,
      file,
    )

    expect(spilled).toBe(false)
    expect(report).toMatchObject({ emptyKeys: 0, duplicateKeys: 250 })
    expect(existsSync(file)).toBe(false)
  })
})
