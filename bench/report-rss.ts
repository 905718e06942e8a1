/**
 * Preloaded (`node --import`) into measured processes: samples the heap and the memory outside it while the
 * process runs, and prints the peaks and the peak resident memory when it exits.
 */
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
    `\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS} BENCH_PEAK_HEAP_USED=${peaks.heapUsed} BENCH_PEAK_EXTERNAL=${peaks.external}\n`,
  )
})
