/**
 * Preloaded (`--import`) into a CLI run, so also into its worker threads: records each thread's nice value where
 * Linux shows it per thread. The main thread writes its value at start and, at exit, every thread still alive; a
 * worker thread writes its own as it ends. One JSON line each, appended to THREAD_PRIORITIES_FILE.
 */
import { appendFileSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { getPriority } from 'node:os'
import { isMainThread } from 'node:worker_threads'

const file = process.env.THREAD_PRIORITIES_FILE
const self = Number(readlinkSync('/proc/thread-self').split('/').pop())
const describe = (tid, role) => {
  try {
    const name = readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim()
    return `${JSON.stringify({ role, tid, name, nice: getPriority(tid) })}\n`
  } catch {
    return '' // the thread ended meanwhile
  }
}
if (file) {
  if (isMainThread) appendFileSync(file, describe(self, 'start'))
  process.on('exit', () => {
    const lines = isMainThread
      ? readdirSync('/proc/self/task').map((task) => describe(Number(task), Number(task) === self ? 'main' : 'other'))
      : [describe(self, 'worker')]
    appendFileSync(file, lines.join(''))
  })
}
