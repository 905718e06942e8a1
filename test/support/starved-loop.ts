/**
 * Child-process helper for the watchdog test: starts the watchdog with a deadline 300 ms away, then either starves
 * the event loop with microtasks that never yield (`starve`) or stays busy but responsive past the deadline (`idle`).
 *
 * Usage: node test/support/starved-loop.ts starve|idle
 */
import { startWatchdog } from '../../functions/export/lambda/watchdog.ts'

const watchdog = startWatchdog({ deadlineAt: Date.now() + 300, starvedMs: 1000 })
if (process.argv[2] === 'starve') {
  for (;;) await Promise.resolve()
}
await new Promise((resolve) => setTimeout(resolve, 2500))
watchdog.dispose()
console.log('finished')
