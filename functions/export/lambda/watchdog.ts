/**
 * The last resort behind the deadline. The deadline is a timer, and a timer cannot fire while the event loop is
 * starved (a loop of microtasks, or one long synchronous step): the Lambda would then run into its hard timeout
 * with no run record and no metrics. A small thread of its own watches a heartbeat the main thread writes into
 * shared memory; when the deadline has passed and the heartbeat has stopped for `starvedMs`, it writes one coded
 * line to stderr (synchronously: the main thread, which relays a thread's console, is the one that is stuck) and
 * ends the process, so the invocation fails at once and says why.
 */
import { Worker } from 'node:worker_threads'
import { DeadlineError } from '../core/errors.ts'

interface WatchdogOptions {
  /** When the deadline falls (epoch milliseconds); the heartbeat is only judged after it. */
  readonly deadlineAt: number
  /** How long a silent heartbeat past the deadline means starved, not busy. */
  readonly starvedMs: number
}

interface Watchdog {
  /** Stops watching (the run ended); safe to call more than once. */
  dispose(): void
}

const HEARTBEAT_MS = 200

/** Plain JavaScript evaluated in the thread: it loads nothing of the exporter, so it starts in milliseconds. */
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads')
const { writeSync } = require('node:fs')
const { beat, deadlineAt, starvedMs, line } = workerData
const check = () => {
  const silentMs = Date.now() - Number(Atomics.load(beat, 0))
  if (silentMs < starvedMs) return setTimeout(check, ${HEARTBEAT_MS})
  writeSync(2, line.replaceAll('%SILENT%', String(Math.round(silentMs / 1000))) + '\\n')
  process.kill(process.pid, 'SIGKILL')
}
setTimeout(check, Math.max(0, deadlineAt - Date.now()))
`

/** Starts the watchdog thread and the heartbeat it watches. */
export const startWatchdog = (options: WatchdogOptions): Watchdog => {
  const beat = new BigInt64Array(new SharedArrayBuffer(8))
  const pulse = () => Atomics.store(beat, 0, BigInt(Date.now()))
  pulse()
  const heartbeat = setInterval(pulse, HEARTBEAT_MS)
  heartbeat.unref()
  const failure = new DeadlineError({
    reason:
      'the event loop was starved for %SILENT% s past the deadline, so no timer could stop the run; the process was ended and nothing in flight was published',
  })
  const line = JSON.stringify({ level: 'ERROR', message: failure.message, error: failure.toJSON() })
  const worker = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: { beat, deadlineAt: options.deadlineAt, starvedMs: options.starvedMs, line },
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  })
  worker.unref()
  let disposed = false
  return {
    dispose: () => {
      if (disposed) return
      disposed = true
      clearInterval(heartbeat)
      // A thread that cannot be terminated has ended already; nothing waits on it.
      worker.terminate().catch(() => undefined)
    },
  }
}
