/**
 * Retries with exponential backoff and full jitter, a bounded number of attempts and a bounded total time,
 * honouring `Retry-After` up to a cap. Only errors marked `retryable` are retried: never 401, 403 or 404.
 */
import { ExportError } from '../core/errors.ts'

export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxRetryAfterSeconds: number
  readonly totalBudgetSeconds: number
}

export interface RetryClock {
  readonly now: () => number
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly random: () => number
}

export interface RetryNotice {
  readonly attempt: number
  readonly delayMs: number
  readonly error: ExportError
}

/** An error that carries the server's `Retry-After`, already converted to milliseconds. */
interface RetryAfterHint {
  readonly retryAfterMs?: number | undefined
}

export const systemClock: RetryClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const timer = setTimeout(resolve, ms)
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer)
          reject(signal.reason)
        },
        { once: true },
      )
    }),
  random: Math.random,
}

/** An HTTP date starts with the day of the week (IMF-fixdate, RFC 850 and asctime formats alike). */
const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /

/**
 * Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds from `now`; anything else is ignored
 * (the backoff applies), since Date.parse would take "-5" or "1.5" for dates and mean "retry at once".
 */
export const parseRetryAfter = (value: string | undefined, now: number): number | undefined => {
  const trimmed = value?.trim() ?? ''
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  if (!HTTP_DATE_START.test(trimmed)) return undefined
  // HTTP dates are in GMT; the asctime format does not say so, and Date.parse would read it as local time.
  const date = Date.parse(/GMT$/.test(trimmed) ? trimmed : `${trimmed} GMT`)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Full-jitter backoff: a random delay between 0 and min(max, base * 2^(attempt-1)). */
export const backoffDelay = (attempt: number, policy: RetryPolicy, random: () => number): number =>
  Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)))

/**
 * Runs `operation` until it succeeds, fails with a non-retryable error, or the attempts or time budget run out.
 * The last error is rethrown as it is.
 */
export const withRetries = async <T>(
  operation: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  options: {
    clock?: RetryClock
    signal?: AbortSignal | undefined
    onRetry?: (notice: RetryNotice) => void
    /** Whether this failure is worth another attempt. @default the error's own `retryable` */
    shouldRetry?: (error: ExportError) => boolean
  } = {},
): Promise<T> => {
  const clock = options.clock ?? systemClock
  const shouldRetry = options.shouldRetry ?? ((error: ExportError) => error.retryable)
  const startedAt = clock.now()
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt)
    } catch (error) {
      if (!(error instanceof ExportError) || !shouldRetry(error) || attempt >= policy.maxAttempts) throw error
      // Stopped from outside (a budget, the deadline): the failure is the stop's, not one worth another attempt.
      if (options.signal?.aborted) throw error
      const retryAfterMs = (error as ExportError & RetryAfterHint).retryAfterMs
      if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterSeconds * 1000) throw error
      const delayMs = retryAfterMs ?? backoffDelay(attempt, policy, clock.random)
      if (clock.now() - startedAt + delayMs > policy.totalBudgetSeconds * 1000) throw error
      options.onRetry?.({ attempt, delayMs, error })
      await clock.sleep(delayMs, options.signal)
    }
  }
}
