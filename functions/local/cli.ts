/**
 * The local runner's entry point: `npm start` (export), `npm run check`, `npm run query`, `npm run ddl`,
 * `npm run reprocess`.
 * Exit status 0 = success, 1 = some table failed or is not ready, 2 = bad usage or configuration.
 */
import { FailureClass } from '../export/constants.ts'
import { ExportError } from '../export/errors.ts'
import { runCheckCommand } from './check-command.ts'
import { ExitCode } from './exit-code.ts'
import { runExportCommand } from './export-command.ts'
import { runDdlCommand, runQueryCommand } from './query-command.ts'
import { runReprocessCommand } from './reprocess-command.ts'
import { consoleOutput, type TerminalOutput } from './terminal.ts'

const COMMANDS = {
  export: runExportCommand,
  check: runCheckCommand,
  query: runQueryCommand,
  ddl: runDdlCommand,
  reprocess: runReprocessCommand,
} as const

export const main = async (argv: readonly string[], output: TerminalOutput = consoleOutput): Promise<ExitCode> => {
  const [name, ...rest] = argv
  const command = COMMANDS[name as keyof typeof COMMANDS]
  if (!command) {
    output.err(`unknown command "${name ?? ''}"; use one of: ${Object.keys(COMMANDS).join(', ')}`)
    return ExitCode.USAGE
  }
  try {
    return await command(rest, output)
  } catch (error) {
    if (!(error instanceof ExportError)) throw error
    output.err(`error [${error.code}]: ${error.message}`)
    if (error.hint) output.err(`next step: ${error.hint}`)
    return error.failureClass === FailureClass.CONFIG ? ExitCode.USAGE : ExitCode.TABLE_FAILED
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2))
}
