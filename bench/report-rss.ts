/**
 * Preloaded (`node --import`) into measured processes, so also into their worker threads: samples each thread's
 * heap and the memory outside it while it runs. The main thread prints its peaks, its CPU seconds and the
 * process's peak resident memory (all threads together) when the process exits; a worker thread prints its own
 * peaks and CPU seconds when it ends. CPU per thread says which of the export's threads sets the pace, a figure a
 * loaded machine disturbs far less than wall time.
 *
 * Where Linux's scheduler statistics are there (`/proc/.../schedstat`), each thread also prints the seconds it
 * waited, runnable, for a core; the main thread adds V8's background threads (garbage collection and compilation
 * helpers, named `V8Worker`), which no JavaScript thread's CPU counts. Together they say whether the export's
 * threads wanted more cores than the machine has.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { getHeapStatistics } from 'node:v8'
import { isMainThread } from 'node:worker_threads'

const peaks = { heapUsed: 0, external: 0 }
/**
 * The heap's statistics rather than process.memoryUsage(), which gives the same two figures but also reads the
 * resident size from /proc: 15 µs a call idle and far more under load, 50 times a second on each thread of the
 * process being measured (the peak resident size comes from the kernel's own count at exit).
 */
const sample = () => {
  const heap = getHeapStatistics()
  peaks.heapUsed = Math.max(peaks.heapUsed, heap.used_heap_size)
  peaks.external = Math.max(peaks.external, heap.external_memory)
}
setInterval(sample, 20).unref()

/** A thread's schedstat: nanoseconds on a core, nanoseconds runnable but waiting for one, then time slices. */
const schedstat = (file: string) => {
  const [onCore, waiting] = readFileSync(file, 'latin1').split(' ').map(Number)
  return { onCore: onCore! / 1e9, waiting: waiting! / 1e9 }
}
/** Without scheduler statistics (not Linux, or a kernel built without them) nothing is printed. */
const ifPresent = <T>(read: () => T): T | undefined => {
  try {
    return read()
  } catch {
    return undefined
  }
}
const v8Helpers = () => {
  let onCore = 0
  let waiting = 0
  for (const task of readdirSync('/proc/self/task')) {
    const dir = `/proc/self/task/${task}`
    if (readFileSync(`${dir}/comm`, 'latin1').trim() !== 'V8Worker') continue
    const stat = schedstat(`${dir}/schedstat`)
    onCore += stat.onCore
    waiting += stat.waiting
  }
  return { onCore, waiting }
}

process.on('exit', () => {
  sample()
  const { user, system } = process.threadCpuUsage()
  const cpuSeconds = (user + system) / 1e6
  const waited = ifPresent(() => schedstat('/proc/thread-self/schedstat').waiting)
  const helpers = isMainThread ? ifPresent(v8Helpers) : undefined
  const scheduler = [
    ...(waited === undefined ? [] : [`BENCH_${isMainThread ? 'MAIN' : 'THREAD'}_WAIT_S=${waited.toFixed(3)}`]),
    ...(helpers === undefined
      ? []
      : [`BENCH_V8_CPU_S=${helpers.onCore.toFixed(3)} BENCH_V8_WAIT_S=${helpers.waiting.toFixed(3)}`]),
  ].join(' ')
  process.stderr.write(
    isMainThread
      ? `\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS} BENCH_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_PEAK_EXTERNAL=${peaks.external} BENCH_MAIN_CPU_S=${cpuSeconds} ${scheduler}\n`
      : `\nBENCH_THREAD_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_THREAD_PEAK_EXTERNAL=${peaks.external} BENCH_THREAD_CPU_S=${cpuSeconds} ${scheduler}\n`,
  )
})
