/** `npm run reprocess`: rebuilds a date's Parquet from the raw archive, without calling the service. */
import { FolderWarehouseStore, parseExportConfig, runExport, UsageError } from '../export/index.ts'
import { parseExportArgs } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { renderSummary, type TerminalOutput, terminalTelemetry } from './terminal.ts'
import { checkWarehouseFolder } from './warehouse-folder.ts'

export const REPROCESS_USAGE = `Usage: npm run reprocess -- --date YYYY-MM-DD (--config FILE | --table ID=NAME ...) [--out DIR]

Rebuilds the Parquet of the given export date from the raw archive (tables with "archiveRaw": true keep their
CSV, gzip-compressed, under _raw/), through the same decode, parse, naming and typing as an export, and replaces
that date's objects atomically. The service is not called; no token is needed.

Flags:
  --date YYYY-MM-DD    the export date to rebuild (required)
  --config FILE        the configuration whose tables (and per-table options) to rebuild
  --table ID=NAME      a table to rebuild (repeatable), when there is no configuration file
  --out DIR            the warehouse folder (default ./warehouse)
  -h, --help           this text`

/** Reprocessing never talks to the service, but the schema wants a base URL. */
const UNUSED_BASE_URL = 'http://127.0.0.1'

export const runReprocessCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const command = await parseExportArgs(argv, { demoAllowed: false })
  if (command.help) {
    output.out(REPROCESS_USAGE)
    return ExitCode.OK
  }
  if (command.exportDate === undefined) throw new UsageError('--date is required: which export date to rebuild')
  const input = { ...command.configInput }
  const source = input.source as { baseUrl?: string }
  if (source.baseUrl === undefined) input.source = { ...source, baseUrl: UNUSED_BASE_URL }
  const config = parseExportConfig(input, command.configOrigin)
  await checkWarehouseFolder(command.outDir)
  const store = new FolderWarehouseStore(command.outDir)
  const record = await runExport(
    config,
    {
      store,
      token: '',
      telemetry: terminalTelemetry(output),
    },
    { exportDate: command.exportDate, fromRawArchive: true },
  )
  output.out(renderSummary(record, store.root))
  return record.status === 'succeeded' ? ExitCode.OK : ExitCode.TABLE_FAILED
}
