/** Preloaded (`node --import`) into measured processes: prints their peak resident memory when they exit. */
process.on('exit', () => {
  process.stderr.write(`\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`)
})
