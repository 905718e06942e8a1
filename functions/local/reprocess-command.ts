/** `npm run reprocess`: rebuilds a date's Parquet from the raw archive, without calling the service. */
import {
  archiveSource,
  FolderWarehouseStore,
  parseConfigWithoutSource,
  runExport,
  UsageError,
} from '../export/index.ts'
import { parseExportArgs } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
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
  --pseudonymization-key-file FILE
                       the key of "columns.pseudonymize" (else INVENTORY_PSEUDONYMIZATION_KEY)
  -h, --help           this text`

export const runReprocessCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const command = await parseExportArgs(argv, { demoAllowed: false })
  if (command.help) {
    output.out(REPROCESS_USAGE)
    return ExitCode.OK
  }
  if (command.exportDate === undefined) throw new UsageError('--date is required: which export date to rebuild')
  // The flags always give a `source` object; without --base-url (or a --config with a source) it is empty.
  const { source, ...withoutSource } = command.configInput
  const input = source !== undefined && Object.keys(source).length > 0 ? command.configInput : withoutSource
  const config = parseConfigWithoutSource(input, command.configOrigin)
  await checkWarehouseFolder(command.outDir)
  const pseudonymizationKey = await readPseudonymizationKey(command.pseudonymizationKeyFile)
  const store = new FolderWarehouseStore(command.outDir)
  const record = await runExport(
    config,
    { source: archiveSource(store), store, telemetry: terminalTelemetry(output), pseudonymizationKey },
    { exportDate: command.exportDate },
  )
  output.out(renderSummary(record, store.root))
  return record.status === 'succeeded' ? ExitCode.OK : ExitCode.TABLE_FAILED
}
