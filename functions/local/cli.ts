/**
 * The local runner's entry point: `npm start` (export), `npm run check`, `npm run query`, `npm run ddl`,
 * `npm run reprocess`.
 * Exit status 0 = success, 1 = some table failed or is not ready, 2 = bad usage or configuration.
 */
import { FailureClass, oneLineMessage, toExportError, UsageError } from '../export/index.ts'
import { runCheckCommand } from './check-command.ts'
import { ExitCode } from './exit-code.ts'
import { runExportCommand } from './export-command.ts'
import { runDdlCommand, runQueryCommand } from './query-command.ts'
import { runReprocessCommand } from './reprocess-command.ts'
import { consoleOutput, type TerminalOutput } from './terminal.ts'
import { runVerifyCommand } from './verify-command.ts'

const COMMANDS = {
  export: runExportCommand,
  check: runCheckCommand,
  query: runQueryCommand,
  ddl: runDdlCommand,
  reprocess: runReprocessCommand,
  verify: runVerifyCommand,
} as const

export const main = async (argv: readonly string[], output: TerminalOutput = consoleOutput): Promise<ExitCode> => {
  const [name, ...rest] = argv
  const command = COMMANDS[name as keyof typeof COMMANDS]
  try {
    if (!command) {
      throw new UsageError(`unknown command "${name ?? ''}"; use one of: ${Object.keys(COMMANDS).join(', ')}`)
    }
    return await command(rest, output)
  } catch (thrown) {
    // Anything uncoded is a bug or an environment problem; it is still reported as one coded line, no stack.
    const error = toExportError(thrown)
    output.err(oneLineMessage(error))
    if (error.hint) output.err(`next step: ${error.hint}`)
    return error.failureClass === FailureClass.CONFIG ? ExitCode.USAGE : ExitCode.TABLE_FAILED
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2))
}
