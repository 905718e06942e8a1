/**
 * The local runner's entry point (every npm script of a command runs this file): Node's compile cache, then, for an
 * export, the parse thread, then the commands (commands.ts).
 *
 * Plain JavaScript on purpose: Node loads its TypeScript stripper (about 0.1 s) for the first .ts file it meets
 * unless that file's stripped code is already in the compile cache, and the cache can only be turned on from code
 * that has already run. Every .ts file after this one is read from the cache, so a start after the first strips
 * and compiles nothing. The cache keeps the compiled code, keyed by each file's contents, in the OS temporary
 * folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import module from 'node:module'
import os from 'node:os'
import path from 'node:path'

// Run with an older `node` than package.json's engines (the system's, not the npm scripts' Node 24), the first .ts
// import would fail with a stack trace: say so in the one coded line every command fails with, and what to run.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `error [USAGE_INVALID]: this command needs Node.js 22.12 or later; this is Node.js ${process.versions.node}`,
  )
  console.error(
    "next step: run it through npm (npm start, npm run check, npm run help): the scripts use the project's Node 24",
  )
  process.exit(2)
}

// An empty value counts as unset: module.enableCompileCache('') would write the cache into the current folder. Set
// in the environment, not only for this thread: that is how the cache reaches the threads the export starts.
process.env.NODE_COMPILE_CACHE ||= path.join(os.tmpdir(), 'node-compile-cache')
module.enableCompileCache(process.env.NODE_COMPILE_CACHE)

// A promise that rejected with nobody listening is a bug, but it must not end the run as a stack trace (Node's
// default) before the run record is written: it is reported as one coded line, the run goes on, and the exit status
// is 1 at least. Registered first, so it covers loading too; the coded wording comes with the commands.
let uncaught = false
let describeUncaught = (reason) => [`error [INTERNAL]: unexpected failure: ${reason?.message ?? String(reason)}`]
process.on('unhandledRejection', (reason) => {
  uncaught = true
  process.exitCode = 1
  for (const line of describeUncaught(reason)) process.stderr.write(`${line}\n`)
})

const argv = process.argv.slice(2)
/** Whether the command line asks for workbooks (`--format xlsx`), which are read on a thread of their own instead. */
const workbooks = argv.some((arg, i) => arg === '--format=xlsx' || (arg === '--format' && argv[i + 1] === 'xlsx'))
if (argv[0] === 'export' && !workbooks) {
  // Node boots a thread and loads its modules in about 0.2 s: started now, that happens while this thread loads the
  // runner's, and the first table parsed on a thread of its own takes it (parse-worker.ts). Imported directly, not
  // through the export's front door, which would load every module first. Unused, it costs about 5 MiB.
  const { prestartParseThread } = await import('../export/csv/parse-worker.ts')
  prestartParseThread()
}
const { main, uncaughtFailureLines } = await import('./commands.ts')
describeUncaught = uncaughtFailureLines
const status = await main(argv)
process.exitCode = uncaught ? Math.max(status, 1) : status
