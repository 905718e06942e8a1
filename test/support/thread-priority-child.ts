/**
 * Run as a child process (the test's own process keeps its priorities): starts a thread, has the others yield to
 * it, then starts a second thread from the lowered main thread and does the same. Prints the nice values seen.
 * The threads run this module too: each sends its kernel id, as a reading thread does, and waits to be stopped.
 */
import { getPriority } from 'node:os'
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import { kernelThreadId, yieldCoresTo } from '../../functions/export/core/thread-priority.ts'

async function yieldTwice(): Promise<void> {
  const startThread = () =>
    new Promise<{ worker: Worker; tid: number }>((resolve) => {
      const worker = new Worker(new URL(import.meta.url))
      worker.once('message', (tid: number) => resolve({ worker, tid }))
    })

  const main = kernelThreadId()!
  const start = getPriority(main)
  const first = await startThread()
  const loweredForFirst = yieldCoresTo(first.tid)
  const afterFirst = { main: getPriority(main), first: getPriority(first.tid) }
  const again = yieldCoresTo(first.tid)
  const second = await startThread()
  const secondStarted = getPriority(second.tid)
  yieldCoresTo(second.tid)
  const afterSecond = { main: getPriority(main), first: getPriority(first.tid), second: getPriority(second.tid) }
  for (const { worker } of [first, second]) worker.postMessage('stop')
  process.stdout.write(
    JSON.stringify({
      main,
      pid: process.pid,
      start,
      loweredForFirst,
      afterFirst,
      again,
      secondStarted,
      afterSecond,
    }),
  )
}

if (!isMainThread) {
  parentPort!.postMessage(kernelThreadId())
  parentPort!.once('message', () => process.exit(0))
} else {
  await yieldTwice()
}
