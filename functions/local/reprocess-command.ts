/** `npm run reprocess`: rebuilds a date's Parquet from the raw archive, without calling the service. */
import {
  archiveSource,
  type ConfigWithoutSource,
  parseConfigWithoutSource,
  runExport,
  UsageError,
} from '../export/index.ts'
import { exportCommandOf, REPROCESS_FLAGS } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { flagHelp, parseFlags } from './flags.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
import { configuredTable, publishedTable } from './published-tables.ts'
import { renderSummary, type TerminalOutput, terminalTelemetry } from './terminal.ts'
import { openWarehouse } from './warehouse-target.ts'

const REPROCESS_USAGE = `Usage: npm run reprocess -- --date YYYY-MM-DD (--config FILE [--table NAME|ID]... | --table NAME|ID...)
                         [--out DIR|s3://BUCKET[/PREFIX]] [--pseudonymization-key-file FILE]

Rebuilds the Parquet of the given export date from the raw archive (tables with "archiveRaw": true keep their
CSV, gzip-compressed, under _raw/), through the same decode, parse, naming and typing as an export, and replaces
that date's objects atomically. The service is not called; no token is needed. A table with no archive for the
date is reported and keeps its data; its latest outcome is left as it was.

${flagHelp(REPROCESS_FLAGS)}`

export const runReprocessCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const { table: tableFlags, ...values } = parseFlags(REPROCESS_FLAGS, argv).values
  const command = exportCommandOf(values, REPROCESS_FLAGS)
  if (command.help) {
    output.out(REPROCESS_USAGE)
    return ExitCode.OK
  }
  if (command.exportDate === undefined) throw new UsageError('--date is required: which export date to rebuild')
  if (command.configFile === undefined && tableFlags === undefined)
    throw new UsageError(
      'which tables to rebuild: give --config FILE or --table NAME|ID (repeatable)',
      'npm run reprocess -- --date YYYY-MM-DD --config FILE, or --table NAME for each table',
    )
  // The flags always give a `source` object; without --base-url (or a --config with a source) it is empty.
  const { source, ...withoutSource } = command.configInput
  const input = source !== undefined && Object.keys(source).length > 0 ? command.configInput : withoutSource
  const { store, catalog } = await openWarehouse(command.warehouse)
  let config: ConfigWithoutSource
  let only: string[] | undefined
  if (command.configFile !== undefined) {
    config = parseConfigWithoutSource(input, command.configOrigin)
    // --table picks among the configured tables, by name or id.
    only = tableFlags?.map((flag) => configuredTable(flag, config.tables).name)
  } else {
    const tables = []
    for (const flag of tableFlags!) tables.push(await publishedTable(flag, store))
    config = parseConfigWithoutSource(
      { ...input, tables: tables.map(({ key, ...t }) => (key ? { ...t, key: [...key] } : t)) },
      command.configOrigin,
    )
  }
  const pseudonymizationKey = await readPseudonymizationKey(command.pseudonymizationKeyFile)
  const record = await runExport(
    config,
    {
      source: archiveSource(store),
      store,
      telemetry: terminalTelemetry(output, { logFormat: command.logFormat, reading: 'archive' }),
      pseudonymizationKey,
      catalog,
    },
    { exportDate: command.exportDate, ...(only ? { tables: only } : {}) },
  )
  output.out(renderSummary(record, store.root, output.colour?.out))
  return record.status === 'succeeded' ? ExitCode.OK : ExitCode.TABLE_FAILED
}
