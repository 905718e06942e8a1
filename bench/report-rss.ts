/**
 * Preloaded (`node --import`) into measured processes, so also into their worker threads: samples each thread's
 * heap and the memory outside it while it runs. The main thread prints its peaks, its CPU seconds and the
 * process's peak resident memory (all threads together) when the process exits; a worker thread prints its own
 * peaks and CPU seconds when it ends. CPU per thread says which of the export's threads sets the pace, a figure a
 * loaded machine disturbs far less than wall time.
 */
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
process.on('exit', () => {
  sample()
  const { user, system } = process.threadCpuUsage()
  const cpuSeconds = (user + system) / 1e6
  process.stderr.write(
    isMainThread
      ? `\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS} BENCH_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_PEAK_EXTERNAL=${peaks.external} BENCH_MAIN_CPU_S=${cpuSeconds}\n`
      : `\nBENCH_THREAD_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_THREAD_PEAK_EXTERNAL=${peaks.external} BENCH_THREAD_CPU_S=${cpuSeconds}\n`,
  )
})
