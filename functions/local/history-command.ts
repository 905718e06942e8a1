/**
 * What `npm run erase` and `npm run rewrite` share: one configured table picked by `--table`, the warehouse it is
 * published in (a folder or S3, with Glue when asked), the pseudonymization key and the terminal's telemetry; and,
 * with `--aws-event`, the deployed key and the batch size the state machine's input is made with.
 */
import os from 'node:os'
import path from 'node:path'
import {
  ConfigError,
  closestKey,
  DEFAULT_BATCH_DATES,
  MAX_BATCH_DATES,
  type PseudonymizationKey,
  parseConfigWithoutSource,
  type TableConfig,
  UsageError,
} from '../export/index.ts'
import { parseExportArgs, REPROCESS_FLAGS } from './args.ts'
import type { FlagSpecs } from './flags.ts'
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

/** `--keep-versions`, the same for erase and rewrite (and their `--aws-event`). */
export const KEEP_VERSIONS_FLAG = {
  'keep-versions': {
    type: 'boolean',
    help: "leave the earlier versions a versioned bucket keeps of each rewritten date (they hold the\nvalues in clear) to the bucket's version expiry, instead of deleting them",
  },
} as const satisfies FlagSpecs

/** `--batch-size`, the same for every command with `--aws-event`. */
export const BATCH_SIZE_FLAG = {
  'batch-size': {
    type: 'string',
    value: 'N',
    help: `with --aws-event: export dates per invocation (1 to ${MAX_BATCH_DATES}; default ${DEFAULT_BATCH_DATES})`,
  },
} as const satisfies FlagSpecs

/**
 * What a command's `--aws-event` is made from: the table (without opening the warehouse), the deployed key, which
 * is therefore required (`needed` says what for), and `--batch-size`.
 */
export const awsEventInput = async (
  argv: readonly string[],
  selector: Selector,
  own: OwnFlags,
  values: { 'dry-run'?: boolean | undefined; 'batch-size'?: string | undefined },
  needed: { readonly why: string; readonly docs: string },
): Promise<{ table: TableConfig; key: PseudonymizationKey; batchSize: number | undefined }> => {
  if (values['dry-run'] === true) {
    throw new UsageError('--dry-run and --aws-event do not go together: --aws-event changes nothing either')
  }
  const { table, command } = await pickHistoryTable(argv, selector, own)
  const key = await readPseudonymizationKey(command.pseudonymizationKeyFile)
  if (key === undefined) {
    throw new ConfigError(
      'pseudonymization key',
      [{ field: '--pseudonymization-key-file', message: `is needed with --aws-event: ${needed.why}` }],
      `give the key of the stack's PseudonymizationSecretArn output (${needed.docs}); nothing was printed`,
    )
  }
  const text = values['batch-size']
  const batchSize = text === undefined ? undefined : Number(text)
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_DATES)) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${MAX_BATCH_DATES}`)
  }
  return { table, key, batchSize }
}
