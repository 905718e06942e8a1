/**
 * The local runner's commands: `npm start` (export), `npm run check`, `npm run query`, `npm run ddl`,
 * `npm run reprocess`, `npm run erase`, `npm run reset`, `npm run help`. Started through cli.mjs.
 * Exit status 0 = success, 1 = some table failed or is not ready (or the SQL failed), 2 = bad usage or configuration.
 */
import {
  closestKey,
  type ExportError,
  FailureClass,
  oneLineMessage,
  toExportError,
  UsageError,
} from '../export/index.ts'
import { runCheckCommand } from './check-command.ts'
import { runConvertCommand } from './convert-command.ts'
import { runEraseCommand } from './erase-command.ts'
import { ExitCode } from './exit-code.ts'
import { runExportCommand } from './export-command.ts'
import { localHint } from './next-step.ts'
import { runDdlCommand, runQueryCommand } from './query-command.ts'
import { runReprocessCommand } from './reprocess-command.ts'
import { runResetCommand } from './reset-command.ts'
import { runRewriteCommand } from './rewrite-command.ts'
import { consoleOutput, type TerminalOutput } from './terminal.ts'

const COMMANDS = {
  export: {
    run: runExportCommand,
    npm: 'npm start',
    does: 'export the saved tables (no flags: the demo) to ./warehouse',
  },
  check: { run: runCheckCommand, npm: 'npm run check', does: 'check the token and each table before exporting' },
  query: { run: runQueryCommand, npm: 'npm run query', does: 'run SQL over the local warehouse (table, csv or json)' },
  ddl: { run: runDdlCommand, npm: 'npm run ddl', does: 'print the Athena DDL of the exported tables' },
  reprocess: { run: runReprocessCommand, npm: 'npm run reprocess', does: "rebuild a date's Parquet from the archive" },
  erase: {
    run: runEraseCommand,
    npm: 'npm run erase',
    does: 'remove the rows holding a value from every date of a table (erasure requests)',
  },
  rewrite: {
    run: runRewriteCommand,
    npm: 'npm run rewrite',
    does: 'bring every date of a table in line after a columnTypes, drop or pseudonymize change',
  },
  convert: {
    run: runConvertCommand,
    npm: 'npm run convert',
    does: "move a table's history between the Hive layout and Iceberg, without downloading",
  },
  reset: { run: runResetCommand, npm: 'npm run reset', does: 'delete the local warehouse folder, to start afresh' },
  verify: {
    // Loaded only here: the AWS SDK clients verify uses are of no use to a local export.
    run: async (argv: readonly string[], output: TerminalOutput) =>
      (await import('./verify-command.ts')).runVerifyCommand(argv, output),
    npm: 'npm run verify',
    does: 'check a deployed stack: export one table and query it in Athena',
  },
} as const
type CommandName = keyof typeof COMMANDS

export const USAGE = `Usage: npm start -- [flags]   or   npm run <command> -- [flags]

Exports an inventory service's saved tables as Parquet into a local warehouse folder, as the Lambda does to S3.

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.npm.padEnd(19)}${c.does}`)
  .join('\n')}

Each command lists its flags with --help, e.g. npm run check -- --help.
Exit status: 0 success; 1 a table failed, something is not ready or the SQL failed; 2 bad usage or configuration.`

const HELP_WORDS = new Set(['--help', '-h', 'help'])

export const main = async (argv: readonly string[], output: TerminalOutput = consoleOutput): Promise<ExitCode> => {
  const [name, ...rest] = argv
  try {
    if (name === undefined || HELP_WORDS.has(name)) {
      output.out(USAGE)
      return ExitCode.OK
    }
    const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name as CommandName] : undefined
    if (!command) {
      const guess = closestKey(name, Object.keys(COMMANDS))
      throw new UsageError(
        `unknown command "${name}"${guess ? `; did you mean "${guess}"?` : ''} (commands: ${Object.keys(COMMANDS).join(', ')})`,
        'run npm run help for the commands',
      )
    }
    return await command.run(rest, output)
  } catch (thrown) {
    // Anything uncoded is a bug or an environment problem; it is still reported as one coded line, no stack.
    const error = toExportError(thrown)
    for (const line of failureLines(error)) output.err(line)
    return error.failureClass === FailureClass.CONFIG ? ExitCode.USAGE : ExitCode.TABLE_FAILED
  }
}

/** A failure as one coded line and its next step. */
const failureLines = (error: ExportError): string[] => {
  const hint = localHint(error)
  return [oneLineMessage(error), ...(hint ? [`next step: ${hint}`] : [])]
}

/** A rejection nobody handled (a bug), reported as every other failure is. */
export const uncaughtFailureLines = (reason: unknown): string[] => failureLines(toExportError(reason))
