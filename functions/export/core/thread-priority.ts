/**
 * The reading thread's claim on a core. On two cores a table's reading thread (csv-parse, or the workbook's XML)
 * sets the export's pace, while the main thread and V8's background threads share the other core and have time
 * to spare; at equal priority the scheduler still takes the reading thread off its core whenever
 * they want more than one, and it waited over a second for a core in each 500 MB bench run. So the reading thread,
 * once it has started, has those threads yield to it: their nice value is set a few steps above its own.
 *
 * Linux only: there a nice value belongs to each thread (setpriority on a thread id) and a process may lower its
 * own threads' priority without privileges. It can never raise it again, so threads started later by a lowered
 * thread start lowered, and each reading thread sets the others relative to its own value rather than to an
 * absolute one: priorities are only ever compared between threads. Elsewhere, or where the kernel refuses, every
 * thread keeps the share it had.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/**
 * Nice steps the yielding threads are set above the reading thread: Linux's scheduler then gives the reading
 * thread about three times their share of a core they contend for (weights 1024 against 335 at 0 and 5), while
 * they still get all of a core it does not want.
 */
export const YIELD_NICE_STEPS = 5
/** The lowest priority a thread can have. */
const LOWEST_PRIORITY = 19

/** The calling thread's id in the kernel's numbering, where the platform shows it (Linux); else undefined. */
export const kernelThreadId = (): number | undefined => {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(tid) && tid > 0 ? tid : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a thread of this process yields to a reading thread: the main thread (which encodes and uploads) and
 * V8's background threads (collection and compilation). Other JavaScript threads, such as another table's reading
 * thread, keep their priority, and so does libuv's pool, which inflates a workbook for its reading thread.
 */
const yields = (tid: number, name: string): boolean => tid === process.pid || name.startsWith('V8Worker')

/**
 * Sets every thread that yields (see `yields`) to `YIELD_NICE_STEPS` above the nice value of thread `reader`,
 * unless it is already there or lower. Returns the ids of the threads it set; nothing where the platform has no
 * per-thread priority. Best effort: a thread that ended meanwhile, or a refusal, leaves that thread as it was.
 */
export const yieldCoresTo = (reader: number): number[] => {
  let tasks: string[]
  let target: number
  try {
    tasks = readdirSync('/proc/self/task')
    target = Math.min(LOWEST_PRIORITY, getPriority(reader) + YIELD_NICE_STEPS)
  } catch {
    return []
  }
  const lowered: number[] = []
  for (const task of tasks) {
    const tid = Number(task)
    if (tid === reader) continue
    try {
      const name = readFileSync(`/proc/self/task/${task}/comm`, 'latin1').trim()
      if (!yields(tid, name) || getPriority(tid) >= target) continue
      setPriority(tid, target)
      lowered.push(tid)
    } catch {
      // The thread ended between the listing and now, or the kernel refused: it keeps its share.
    }
  }
  return lowered
}
