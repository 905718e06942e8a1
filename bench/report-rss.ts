/**
 * Preloaded (`node --import`) into measured processes, so also into their worker threads: samples each thread's
 * heap and the memory outside it while it runs. The main thread prints its peaks and the process's peak resident
 * memory (all threads together) when the process exits; a worker thread prints its own peaks when it ends.
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
  process.stderr.write(
    isMainThread
      ? `\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS} BENCH_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_PEAK_EXTERNAL=${peaks.external}\n`
      : `\nBENCH_THREAD_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_THREAD_PEAK_EXTERNAL=${peaks.external}\n`,
  )
})
