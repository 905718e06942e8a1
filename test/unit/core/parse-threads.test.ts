import { describe, expect, it } from 'vitest'
import { parseThreadCount } from '../../../functions/export/core/parse-threads.ts'

describe('the parse stage gets a thread of its own', () => {
  it('when there is a second core', () => {
    expect(parseThreadCount(1)).toBe(0)
    expect(parseThreadCount(2)).toBe(1)
  })

  it('in Lambda, only when the memory also buys a second vCPU, however many cores the function sees', () => {
    expect(parseThreadCount(2, 1769)).toBe(0)
    expect(parseThreadCount(2, 2560)).toBe(0)
    expect(parseThreadCount(2, 2654)).toBe(1)
    expect(parseThreadCount(2, 3538)).toBe(1)
    expect(parseThreadCount(1, 10_240)).toBe(0)
  })
})

describe('the parse runs on every core', () => {
  it('with one thread per whole vCPU from three on, where one parse thread does as well below', () => {
    expect(parseThreadCount(3)).toBe(3)
    expect(parseThreadCount(6)).toBe(6)
    expect(parseThreadCount(6, 5307)).toBe(3)
    expect(parseThreadCount(6, 10_240)).toBe(5)
  })
})
