/** The run's check of the OS temp folder (test/support/temp-check.ts): what it counts as left behind. */
import { describe, expect, it } from 'vitest'
import { leftovers } from '../support/temp-check.ts'

const before = new Set(['inventory-bundle-a1', 'systemd-private-x'])

describe('what a run left in the OS temp folder', () => {
  it('names every entry that is new since the run started, sorted', () => {
    expect(
      leftovers(before, ['systemd-private-x', 'key-counter-Zx1', 'inventory-bundle-a1', 'fault-matrix-out-q']),
    ).toEqual(['fault-matrix-out-q', 'key-counter-Zx1'])
  })

  it('names nothing when the folder holds what it held', () => {
    expect(leftovers(before, [...before])).toEqual([])
  })

  it("leaves out Node's compile cache, a cache across runs", () => {
    expect(leftovers(before, [...before, 'node-compile-cache'])).toEqual([])
  })

  it("leaves out the folder of a test file whose process still runs (another run's), not a dead one's", () => {
    const alive = (pid: number) => pid === 4242
    expect(leftovers(before, ['inventory-tests-4242-k3j2h1', 'inventory-tests-977-a8d0c2'], alive)).toEqual([
      'inventory-tests-977-a8d0c2',
    ])
  })
})
