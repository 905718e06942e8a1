import { describe, expect, it } from 'vitest'
import {
  AuthenticationError,
  HttpClientError,
  NetworkError,
  PermissionError,
  ServerError,
  TableNotFoundError,
} from '../../../functions/export/core/errors.ts'
import {
  backoffDelay,
  parseRetryAfter,
  type RetryClock,
  type RetryNotice,
  type RetryPolicy,
  withRetries,
} from '../../../functions/export/source/retry.ts'

const POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRetryAfterSeconds: 120,
  totalBudgetSeconds: 600,
}

/** A clock that only moves when the code under test sleeps; `random` is fixed. */
const fakeClock = (random = 0.5): RetryClock & { slept: number[]; time: number } => {
  const clock = {
    slept: [] as number[],
    time: Date.parse('2026-03-14T10:00:00Z'),
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.slept.push(ms)
      clock.time += ms
    },
    random: () => random,
  }
  return clock
}

const serverError = (retryAfterMs?: number) =>
  new ServerError({ tableId: '1', status: 503, what: 'GET /rest/tables/1/csv', retryAfterMs })

/** An operation that fails with `errors` in turn, then succeeds; counts its calls. */
const failingThen = (...errors: Error[]) => {
  const calls: number[] = []
  const operation = async (attempt: number) => {
    calls.push(attempt)
    const error = errors[attempt - 1]
    if (error) throw error
    return 'ok'
  }
  return { operation, calls }
}

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-14T10:00:00Z')

  it.each([
    ['delta seconds', '120', 120_000],
    ['zero', '0', 0],
    ['surrounding space', ' 7 ', 7000],
    ['an HTTP date in the future', 'Sat, 14 Mar 2026 10:00:30 GMT', 30_000],
    ['an HTTP date in the past', 'Sat, 14 Mar 2026 09:00:00 GMT', 0],
    ['an RFC 850 date', 'Saturday, 14-Mar-26 10:01:00 GMT', 60_000],
    ['an asctime date', 'Sat Mar 14 10:00:10 2026', 10_000],
  ])('reads %s', (_, value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected)
  })

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['negative', '-5'],
    ['fractional', '1.5'],
    ['garbage', 'soon'],
    ['a date without its day of the week', '2026-03-14T10:00:30Z'],
  ])('ignores a value that is %s', (_, value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined()
  })
})

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt up to maxDelayMs, with full jitter', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffDelay(attempt, POLICY, () => 0.999999))).toEqual([
      999, 1999, 3999, 7999, 15_999, 29_999, 29_999,
    ])
    expect(backoffDelay(3, POLICY, () => 0)).toBe(0)
    expect(backoffDelay(3, POLICY, () => 0.5)).toBe(2000)
  })
})

describe('withRetries', () => {
  it('returns at once when the first attempt succeeds', async () => {
    const clock = fakeClock()
    const { operation, calls } = failingThen()
    await expect(withRetries(operation, POLICY, { clock })).resolves.toBe('ok')
    expect(calls).toEqual([1])
    expect(clock.slept).toEqual([])
  })

  it('retries transient failures with backoff and tells about each retry', async () => {
    const clock = fakeClock()
    const notices: RetryNotice[] = []
    const network = new NetworkError({ what: 'GET', reason: 'ECONNRESET' })
    const { operation, calls } = failingThen(serverError(), network)

    await expect(withRetries(operation, POLICY, { clock, onRetry: (n) => notices.push(n) })).resolves.toBe('ok')

    expect(calls).toEqual([1, 2, 3])
    expect(clock.slept).toEqual([500, 1000])
    expect(notices.map((n) => [n.attempt, n.delayMs, n.error.code])).toEqual([
      [1, 500, 'SERVER_ERROR'],
      [2, 1000, 'NETWORK_ERROR'],
    ])
  })

  it('gives up after maxAttempts and rethrows the last error as it is', async () => {
    const clock = fakeClock()
    const last = serverError()
    const { operation, calls } = failingThen(serverError(), serverError(), serverError(), last, serverError())

    await expect(withRetries(operation, POLICY, { clock })).rejects.toBe(last)
    expect(calls).toEqual([1, 2, 3, 4])
  })

  it.each([
    ['401', new AuthenticationError({ status: 401, what: 'GET' })],
    ['403', new PermissionError({ status: 403, what: 'GET' })],
    ['404', new TableNotFoundError({ status: 404, what: 'GET' })],
    ['another 4xx', new HttpClientError({ status: 400, what: 'GET' })],
    ['an uncoded error', new Error('bug')],
  ])('never retries %s', async (_, error) => {
    const { operation, calls } = failingThen(error)
    await expect(withRetries(operation, POLICY, { clock: fakeClock() })).rejects.toBe(error)
    expect(calls).toEqual([1])
  })

  it('waits as long as Retry-After says instead of the backoff', async () => {
    const clock = fakeClock()
    const { operation } = failingThen(serverError(45_000))
    await withRetries(operation, POLICY, { clock })
    expect(clock.slept).toEqual([45_000])
  })

  it('fails at once when Retry-After exceeds maxRetryAfterSeconds', async () => {
    const clock = fakeClock()
    const error = serverError(121_000)
    const { operation, calls } = failingThen(error)
    await expect(withRetries(operation, POLICY, { clock })).rejects.toBe(error)
    expect(calls).toEqual([1])
    expect(clock.slept).toEqual([])
  })

  it('stops when the next wait would go past the total budget', async () => {
    const clock = fakeClock()
    const policy = { ...POLICY, maxAttempts: 10, totalBudgetSeconds: 100 }
    const { operation, calls } = failingThen(serverError(60_000), serverError(60_000), serverError(60_000))
    await expect(withRetries(operation, policy, { clock })).rejects.toBeInstanceOf(ServerError)
    expect(calls).toEqual([1, 2])
    expect(clock.slept).toEqual([60_000])
  })

  it('counts the time the attempts themselves took against the budget', async () => {
    const clock = fakeClock()
    const policy = { ...POLICY, totalBudgetSeconds: 10 }
    const operation = async () => {
      clock.time += 9_800
      throw serverError()
    }
    await expect(withRetries(operation, policy, { clock })).rejects.toBeInstanceOf(ServerError)
    expect(clock.slept).toEqual([])
  })

  it('stops waiting when the signal aborts, with the abort reason', async () => {
    const controller = new AbortController()
    const reason = new Error('deadline')
    const clock: RetryClock = {
      ...fakeClock(),
      sleep: (_ms, signal) =>
        new Promise((_, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
          controller.abort(reason)
        }),
    }
    const { operation, calls } = failingThen(serverError(), serverError())
    await expect(withRetries(operation, POLICY, { clock, signal: controller.signal })).rejects.toBe(reason)
    expect(calls).toEqual([1])
  })
})
