/**
 * The local runner's entry point (every npm script of a command runs this file): Node's compile cache, then the
 * commands (commands.ts). A command loads about a hundred TypeScript modules, and stripping their types and
 * compiling them cost about 0.4 s of a start, again in each thread the export starts (the parse and workbook
 * threads load the same sources). The cache keeps the compiled code, keyed by each file's contents, in the OS
 * temporary folder, so every start after the first skips that work. It must be on before the modules load, so
 * the commands are imported only once it is. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import module from 'node:module'
import os from 'node:os'
import path from 'node:path'
import type { ExitCode } from './exit-code.ts'
import type { TerminalOutput } from './terminal.ts'

/**
 * Turns Node's compile cache on for this process and, through NODE_COMPILE_CACHE, for the threads it starts:
 * module.enableCompileCache() alone reaches only this thread.
 */
const enableCompileCache = (): void => {
  // An empty value counts as unset: module.enableCompileCache('') would write the cache into the current folder.
  process.env.NODE_COMPILE_CACHE ||= path.join(os.tmpdir(), 'node-compile-cache')
  module.enableCompileCache(process.env.NODE_COMPILE_CACHE)
}

/** Runs the command `argv` names; resolves to the exit status. */
export const main = async (argv: readonly string[], output?: TerminalOutput): Promise<ExitCode> =>
  (await import('./commands.ts')).main(argv, output)

if (import.meta.main) {
  enableCompileCache()
  process.exitCode = await main(process.argv.slice(2))
}
