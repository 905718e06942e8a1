import { availableParallelism } from 'node:os'

/**
 * How many threads parsing a table may use, decided once at the edge from the CPU the process has: its cores, and
 * in Lambda no more than its memory buys. The CSV stage takes the count; it knows nothing of Lambda.
 */

/** Lambda gives a function CPU time in proportion to its memory, whatever number of cores it lets it see. */
export const LAMBDA_MB_PER_VCPU = 1769

/**
 * vCPUs from which parsing on every core pays. Chunking, verifying and one more thread cost about a quarter more
 * CPU than the one parse thread (measured, see docs/architecture.md, "Parsing on every core"), so on two vCPUs
 * both cores are kept as busy by the one parse thread and the main thread; from three, the parse gets cores of its
 * own.
 */
const MIN_PARALLEL_VCPUS = 3

/**
 * A second thread needs a second core, and in Lambda at least one and a half vCPUs' worth of memory. Below that
 * both threads would share one vCPU's time, and the thread only costs.
 */
const MIN_THREAD_VCPUS = 1.5

/** vCPUs the process has: its cores, and in Lambda (`lambdaMemoryMb`) no more than its memory buys. */
export const availableVcpus = (cores: number, lambdaMemoryMb?: number | undefined): number =>
  Math.min(cores, lambdaMemoryMb === undefined ? cores : lambdaMemoryMb / LAMBDA_MB_PER_VCPU)

/**
 * Threads parsing may use: 0 parses on the main thread, 1 on a thread of its own, 3 or more on that many (one per
 * whole vCPU, when there are enough to pay).
 */
export const parseThreadCount = (cores: number, lambdaMemoryMb?: number | undefined): number => {
  const vcpus = availableVcpus(cores, lambdaMemoryMb)
  if (vcpus < MIN_THREAD_VCPUS) return 0
  return Math.floor(vcpus) >= MIN_PARALLEL_VCPUS ? Math.floor(vcpus) : 1
}

/** How a table uses the worker threads it is granted: parsing (0 on the main thread), and a thread to encode on. */
export interface ThreadSplit {
  /** As `parseThreadCount` counts them: 0 on the main thread, 1 on a thread of its own, 2 or more in chunks. */
  readonly parse: number
  /** The Parquet file is written on a thread of its own (parquet/encode-thread.ts). */
  readonly encode: boolean
}

/**
 * The split of `threads` worker threads: with two or more, one encodes and the others parse, since once the parse
 * runs beside the main thread, the main thread's encoding is what sets the pace.
 */
export const splitThreads = (threads: number = parseThreadCount(availableParallelism())): ThreadSplit =>
  threads >= 2 ? { parse: threads - 1, encode: true } : { parse: threads, encode: false }

/** The worker threads a table gets: `export.workerThreads` when it sets a number, else what the edge granted. */
export const tableThreads = (setting: 'auto' | number, granted: number | undefined): number | undefined =>
  setting === 'auto' ? granted : setting
