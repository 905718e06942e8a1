import { describe, expect, it } from 'vitest'
import { FaultQueue } from '../../emulator/faults.ts'
import { EmulatorError, EmulatorErrorCode, type Fault } from '../../emulator/index.ts'

const status = (code: number): Fault => ({ kind: 'status', status: code })

describe('FaultQueue', () => {
  it('hands out scripted faults in order, one per request, then none', () => {
    const queue = new FaultQueue()
    queue.script('1001', [status(503), { kind: 'html200' }])
    expect([queue.take('1001'), queue.take('1001'), queue.take('1001')]).toEqual([
      status(503),
      { kind: 'html200' },
      undefined,
    ])
  })

  it('appends a second script to the faults still queued for the target', () => {
    const queue = new FaultQueue()
    queue.script('me', [status(500)])
    queue.script('me', [status(502)])
    expect([queue.take('me'), queue.take('me')]).toEqual([status(500), status(502)])
  })

  it("prefers the target's script, then the * script, then the target's always, then the * always", () => {
    const queue = new FaultQueue()
    queue.always('*', status(599))
    queue.always('1001', status(598))
    queue.script('*', [status(597)])
    queue.script('1001', [status(596)])
    expect([1, 2, 3, 4].map(() => queue.take('1001'))).toEqual([status(596), status(597), status(598), status(598)])
    expect(queue.take('1002')).toEqual(status(599))
  })

  it('gives paths without a target only the * faults', () => {
    const queue = new FaultQueue()
    queue.script('1001', [status(500)])
    expect(queue.take(undefined)).toBeUndefined()
    queue.always('*', { kind: 'empty200' })
    expect(queue.take(undefined)).toEqual({ kind: 'empty200' })
  })

  it('forgets scripts and always faults on clear', () => {
    const queue = new FaultQueue()
    queue.script('1001', [status(500)])
    queue.always('*', status(502))
    queue.clear()
    expect(queue.take('1001')).toBeUndefined()
  })

  it.each([
    [{ kind: 'status', status: 99 }, 'status must be an integer from 200 to 599, got 99'],
    [{ kind: 'status', status: 600 }, 'status must be an integer from 200 to 599, got 600'],
    [{ kind: 'delay', ms: -1 }, 'ms must be a non-negative integer, got -1'],
    [{ kind: 'truncate', afterBytes: 1.5 }, 'afterBytes must be a non-negative integer, got 1.5'],
    [{ kind: 'stall', afterBytes: 10, ms: Number.NaN }, 'ms must be a non-negative integer, got NaN'],
    [{ kind: 'reset', afterBytes: -3 }, 'afterBytes must be a non-negative integer or undefined, got -3'],
    [{ kind: 'teapot' }, 'unknown kind "teapot"'],
  ])('rejects the malformed fault %j with a coded error', (fault, problem) => {
    const queue = new FaultQueue()
    const attempt = (): void => queue.script('1001', [fault as Fault])
    expect(attempt).toThrow(EmulatorError)
    expect(attempt).toThrow(problem)
    expect(() => queue.always('1001', fault as Fault)).toThrow(
      expect.objectContaining({ code: EmulatorErrorCode.FAULT_INVALID }),
    )
  })

  it('queues nothing from a script that holds one malformed fault', () => {
    const queue = new FaultQueue()
    expect(() => queue.script('1001', [status(503), { kind: 'delay', ms: -5 }])).toThrow(EmulatorError)
    expect(queue.take('1001')).toBeUndefined()
  })
})
