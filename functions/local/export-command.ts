/** `npm start`: exports the configured tables (or the demo) into a local warehouse folder, or to S3. */
import { refuseKeyAsToken, runExport, serviceSource } from '../export/index.ts'
import { EXPORT_USAGE, parseExportArgs } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
import { renderResult } from './query-formats.ts'
import { checkOnly, withServiceSession } from './session.ts'
import { consoleOutput, renderSummary, type TerminalOutput, terminalTelemetry } from './terminal.ts'
import { openWarehouse } from './warehouse-target.ts'

export const runExportCommand = async (
  argv: readonly string[],
  output: TerminalOutput = consoleOutput,
): Promise<ExitCode> => {
  const command = await parseExportArgs(argv)
  if (command.help) {
    output.out(EXPORT_USAGE)
    return ExitCode.OK
  }
  const { store, catalog, local } = await openWarehouse(command.warehouse)
  const pseudonymizationKey = await readPseudonymizationKey(command.pseudonymizationKeyFile)
  return withServiceSession(command, async ({ config, token, extraCaCertificates, demo }) => {
    const telemetry = terminalTelemetry(output, { logFormat: command.logFormat })
    refuseKeyAsToken(
      pseudonymizationKey,
      token,
      command.tokenFile ? `--token-file ${command.tokenFile}` : 'INVENTORY_TOKEN',
    )
    if (demo && command.logFormat === 'json')
      telemetry.info('demo: exporting the built-in stand-in service', { baseUrl: demo.baseUrl })
    else if (demo) output.err(`demo: exporting the built-in stand-in service at ${demo.baseUrl}`)
    checkOnly(config, command.only)
    const source = serviceSource({ source: config.source, token, tuning: config.export, extraCaCertificates })
    const record = await runExport(
      config,
      { source, store, telemetry, pseudonymizationKey, catalog },
      { exportDate: command.exportDate, tables: command.only, acceptChanges: command.acceptChanges },
    )
    output.out(renderSummary(record, store.root, output.colour?.out))
    // DuckDB reads a folder; on S3 the same SQL runs in Athena.
    if (demo && local && record.status === 'succeeded') await printExampleQuery(store.root, output)
    return record.status === 'succeeded' ? ExitCode.OK : ExitCode.TABLE_FAILED
  })
}

/** The demo ends with a query analysts could run in Athena, run here by DuckDB over the folder just written. */
const DEMO_QUERY =
  'SELECT operating_system, count(*) AS devices, round(avg(ram_gb), 1) AS avg_ram_gb FROM devices_latest GROUP BY 1 ORDER BY 2 DESC'

const printExampleQuery = async (root: string, output: TerminalOutput) => {
  // Loaded only here: DuckDB's native library is tens of MB of resident memory that an export does not need.
  const { queryWarehouse } = await import('./warehouse-sql.ts')
  output.out(`\nTry a query (the same SQL runs in Athena):\n  npm run query -- "${DEMO_QUERY}"\n`)
  output.out(renderResult(await queryWarehouse(root, DEMO_QUERY)))
}
