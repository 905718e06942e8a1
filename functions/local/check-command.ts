/**
 * `npm run check`: before deploying, shows whose token it is and, for each table, whether it is reachable and
 * readable, with its columns as they would be named and typed, reading only the start of each export.
 */
import os from 'node:os'
import {
  type LimitsConfig,
  LineageColumn,
  previewTable,
  printable,
  serviceSource,
  type TableConfig,
  type TablePreview,
  type TableSource,
  toExportError,
} from '../export/index.ts'
import { CHECK_FLAGS, parseExportArgs } from './args.ts'
import { paint, Tone } from './colour.ts'
import { ExitCode } from './exit-code.ts'
import { flagHelp } from './flags.ts'
import { localHint } from './next-step.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
import { checkOnly, type ServiceSession, withServiceSession } from './session.ts'
import { type TerminalOutput, terminalTelemetry } from './terminal.ts'

const CHECK_USAGE = `Usage: npm run check -- --base-url URL --table ID[=NAME] [--table ...] [--token-file FILE | --config FILE]

Checks, without exporting anything, that the token works (and whose it is) and that every table is reachable and
readable; shows each table's columns as they would be named and typed, judged from the first rows only.
The token is read as for npm start (--token-file, else INVENTORY_TOKEN). With no flags at all (or with
--demo) it checks the built-in stand-in service; --table or --token-file without --base-url or --config is an
error.

${flagHelp(CHECK_FLAGS)}

Exit status: 0 everything is ready; 1 something is not (each problem is shown with the next step); 2 bad usage.`

/** Rows read per table: enough to show plausible types without downloading the table. */
const PREVIEW_ROWS = 1000

/** Columns every export appends after the data columns (the summary and run record count them apart). */
const LINEAGE_COLUMN_COUNT = Object.keys(LineageColumn).length

/** The table opened as the export opens it (one attempt), and only its start read. */
const previewDownload = async (source: TableSource, table: TableConfig, limits: LimitsConfig, database: string) => {
  const bytes = await source.open(table, { exportDate: new Date().toISOString().slice(0, 10), attempt: 1 })
  try {
    return await previewTable(table, bytes.body, {
      rowLimit: PREVIEW_ROWS,
      spoolDirectory: os.tmpdir(),
      limits,
      charset: bytes.charset,
      database,
    })
  } finally {
    bytes.cancel()
  }
}

/** The flags of `npm start` that mean nothing to a check, each with the reason it gives for ignoring it. */
const IGNORED_FLAGS = {
  out: 'check writes nothing',
  'glue-database': 'check writes nothing, so no catalog is updated',
  stack: 'check writes nothing; it reads the service only',
  'accept-changes': 'check publishes nothing, so no upstream change guard holds anything',
  concurrency: 'check reads one table at a time, and only its first rows',
} as const

export const runCheckCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const command = await parseExportArgs(argv, CHECK_FLAGS)
  if (command.help) {
    output.out(CHECK_USAGE)
    return ExitCode.OK
  }
  const log = terminalTelemetry(output, { logFormat: command.logFormat })
  for (const [flag, why] of Object.entries(IGNORED_FLAGS)) {
    if (argv.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`)))
      log.info(`--${flag} is ignored: ${why}`)
  }
  // Read as npm start reads it: a key file that cannot be read or is too short fails here too.
  await readPseudonymizationKey(command.pseudonymizationKeyFile)
  return withServiceSession(command, (session) => {
    checkOnly(session.config, command.only)
    return checkService(session, command.only, output)
  })
}

const checkService = async (
  session: ServiceSession,
  only: readonly string[],
  output: TerminalOutput,
): Promise<ExitCode> => {
  const { config, token, extraCaCertificates } = session
  const tables = config.tables.filter(
    (table) => only.length === 0 || only.includes(table.id) || only.includes(table.name),
  )
  // The export's own source, asked once each: a check reports what is wrong now rather than waiting it out.
  const source = serviceSource({
    source: config.source,
    token,
    tuning: { ...config.export, retry: { ...config.export.retry, maxAttempts: 1 } },
    extraCaCertificates,
  })
  output.out(`service: ${config.source.baseUrl}`)
  const colour = output.colour?.out ?? false
  const ok = paint('OK', Tone.GOOD, colour)
  try {
    const user = (await source.check({})).user ?? {}
    // The user record is the service's text: shown escaped, it cannot add a line (a forged next step) to ours.
    const who = [user.displayName, user.email].filter((v) => typeof v === 'string').join(', ')
    const name = printable(String(user.username ?? 'an unnamed user'))
    output.out(`token: ${ok}, it belongs to ${name}${who ? ` (${printable(who)})` : ''}`)
  } catch (error) {
    reportProblem(output, 'token', error, colour)
    return ExitCode.TABLE_FAILED
  }
  let ready = true
  for (const table of tables) {
    const subject = `table ${table.id} -> ${table.name}`
    try {
      const preview = await previewDownload(source, table, config.limits, config.warehouse.glueDatabase)
      output.out(
        `${subject}: ${ok}, ${preview.columns.length} data columns, and ${LINEAGE_COLUMN_COUNT} lineage columns the export adds (types judged from the first ${preview.rowsRead} rows of its ${table.format})`,
      )
      const width = Math.max(...preview.columns.map((c) => c.name.length))
      for (const column of preview.columns)
        output.out(`    ${column.name.padEnd(width)}  ${column.type.padEnd(9)}  "${printable(column.header)}"`)
      output.out(`    ${keyLine(table, preview)}`)
      // A warning, not a problem: the table exports and is registered, only those views are left out.
      for (const warning of preview.warnings) output.out(`    warning: ${printable(warning)}`)
      if (preview.personalData.length > 0) output.out('    possible personal data:')
      for (const { name, reason } of preview.personalData)
        output.out(`      ${name}: ${reason}; to pseudonymize it: "columns": { "pseudonymize": ["${name}"] }`)
    } catch (error) {
      ready = false
      reportProblem(output, subject, error, colour)
    }
  }
  output.out(
    ready
      ? `${paint('ready', Tone.GOOD, colour)}: every table can be exported`
      : `${paint('NOT READY', Tone.BAD, colour)}: fix the problems above, then check again`,
  )
  return ready ? ExitCode.OK : ExitCode.TABLE_FAILED
}

const keyLine = (table: TableConfig, preview: TablePreview): string => {
  if (table.key) return `key: ${table.key.join(', ')} (the ${table.name}_changes view matches rows by it)`
  const key = preview.suggestedKey
  if (key === undefined) return 'key: none, and no identifier column is unique and never empty in these rows'
  const which = key.length === 1 ? `${key[0]} is unique` : `${key.join(' and ')} are unique together`
  const setting = key.map((name) => `"${name}"`).join(', ')
  return `key: none; ${which} and never empty in these rows: set "key": [${setting}] for the ${table.name}_changes view`
}

const reportProblem = (output: TerminalOutput, subject: string, error: unknown, colour: boolean) => {
  const failure = toExportError(error)
  output.out(
    `${subject}: ${paint('NOT READY', Tone.BAD, colour)} [${failure.code}${failure.status ? ` HTTP ${failure.status}` : ''}] ${failure.message}`,
  )
  const hint = localHint(failure)
  if (hint) output.out(`    next step: ${hint}`)
}
