/**
 * What `npm run erase` and `npm run rewrite` share: one configured table picked by `--table`, the warehouse it is
 * published in (a folder or S3, with Glue when asked), the pseudonymization key and the terminal's telemetry.
 */
import os from 'node:os'
import path from 'node:path'
import { closestKey, parseConfigWithoutSource, type TableConfig, UsageError } from '../export/index.ts'
import { parseExportArgs, REPROCESS_FLAGS } from './args.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
import { type TerminalOutput, terminalTelemetry } from './terminal.ts'
import { openWarehouse } from './warehouse-target.ts'

type Selector = { readonly table: string; readonly config: string | undefined }
/** The command's own flags, left out of the shared ones (those taking a value, and the others). */
type OwnFlags = { readonly withValue: readonly string[]; readonly switches: readonly string[] }

/** The command's table and everything it writes through. */
export const openHistoryCommand = async (
  argv: readonly string[],
  selector: Selector,
  own: OwnFlags,
  output: TerminalOutput,
) => {
  const { config, table, command } = await pickHistoryTable(argv, selector, own)
  const { store, catalog } = await openWarehouse(command.warehouse)
  return {
    config,
    table,
    deps: {
      store,
      catalog,
      telemetry: terminalTelemetry(output, { logFormat: command.logFormat, reading: 'warehouse' }),
      spoolDirectory: path.join(os.tmpdir(), 'inventory-export-spool'),
      pseudonymizationKey: await readPseudonymizationKey(command.pseudonymizationKeyFile),
    },
  }
}

/** The configuration and the command's table, without opening the warehouse (`erase --aws-event` needs none). */
export const pickHistoryTable = async (argv: readonly string[], selector: Selector, own: OwnFlags) => {
  const isOwn = (arg: string) =>
    [...own.withValue, ...own.switches].includes(arg) || own.withValue.some((flag) => arg.startsWith(`${flag}=`))
  const isValue = (i: number) => i > 0 && own.withValue.includes(argv[i - 1]!) && !argv[i]!.startsWith('--')
  const rest = argv.filter((arg, i) => !isOwn(arg) && !isValue(i))
  // With a configuration file --table picks one of its tables; without, it names the table as ID=NAME.
  const tableFlags = selector.config === undefined ? ['--table', selector.table] : []
  const command = await parseExportArgs([...rest, ...tableFlags], REPROCESS_FLAGS)
  const { source: _source, ...withoutSource } = command.configInput
  const config = parseConfigWithoutSource(withoutSource, command.configOrigin)
  const name = selector.config === undefined ? (selector.table.split('=')[1] ?? selector.table) : selector.table
  const table: TableConfig | undefined = config.tables.find((t) => t.name === name || t.id === name)
  if (table === undefined) {
    const guess = closestKey(
      name,
      config.tables.map((t) => t.name),
    )
    throw new UsageError(
      `--table "${name}" is not a configured table id or name${guess ? `; did you mean "${guess}"?` : ''}`,
      `name one of the configured tables: ${config.tables.map((t) => t.name).join(', ')}`,
    )
  }
  return { config, table, command }
}
