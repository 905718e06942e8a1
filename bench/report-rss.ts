/**
 * Preloaded (`node --import`) into measured processes, so also into their worker threads: samples each thread's
 * heap and the memory outside it while it runs. The main thread prints its peaks, its CPU seconds and the
 * process's peak resident memory (all threads together) when the process exits; a worker thread prints its own
 * peaks and CPU seconds when it ends. CPU per thread says which of the export's threads sets the pace, a figure a
 * loaded machine disturbs far less than wall time.
 */
import { isMainThread } from 'node:worker_threads'

const peaks = { heapUsed: 0, external: 0 }
const sample = () => {
  const usage = process.memoryUsage()
  peaks.heapUsed = Math.max(peaks.heapUsed, usage.heapUsed)
  peaks.external = Math.max(peaks.external, usage.external)
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
