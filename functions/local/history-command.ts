/**
 * What `npm run erase` and `npm run rewrite` share: one table picked by `--table` (a configured one, or without
 * `--config` one the warehouse publishes), the warehouse it is published in (a folder or S3, with Glue when asked),
 * the dates `--date`, `--from` and `--to` pick, the pseudonymization key and the terminal's telemetry; and, with
 * `--aws-event`, the deployed key and the batch size the state machine's input is made with.
 */
import os from 'node:os'
import path from 'node:path'
import {
  ConfigError,
  type ConfigWithoutSource,
  DEFAULT_BATCH_DATES,
  exportDateProblem,
  MAX_BATCH_DATES,
  type PseudonymizationKey,
  parseConfigWithoutSource,
  storedDates,
  TABLE_NAME_PATTERN,
  type TableConfig,
  UsageError,
  type WarehouseStore,
} from '../export/index.ts'
import { exportCommandOf, parseTableFlag, REPROCESS_FLAGS } from './args.ts'
import { type FlagSpecs, HELP_FLAG } from './flags.ts'
import { readPseudonymizationKey } from './pseudonymization-key.ts'
import { configuredTable, publishedTable } from './published-tables.ts'
import { type TerminalOutput, terminalTelemetry } from './terminal.ts'
import { openWarehouse } from './warehouse-target.ts'

/** The flags every history command takes, with help in the command's own words. */
export const historyFlags = <C extends string, O extends string, K extends string>(words: {
  readonly config: C
  readonly out: O
  readonly key: K
}) =>
  ({
    config: { type: 'string', value: 'FILE', help: words.config },
    out: { ...REPROCESS_FLAGS.out, help: words.out },
    'glue-database': REPROCESS_FLAGS['glue-database'],
    stack: REPROCESS_FLAGS.stack,
    'pseudonymization-key-file': { ...REPROCESS_FLAGS['pseudonymization-key-file'], help: words.key },
    'log-format': REPROCESS_FLAGS['log-format'],
    help: HELP_FLAG,
  }) as const satisfies FlagSpecs

const DATE_VALUE = 'YYYY-MM-DD'

/** `--date`, `--from`, `--to`: which of the table's export dates the command works on (default: every one). */
export const DATE_FLAGS = {
  date: { type: 'string', value: DATE_VALUE, help: 'only this export date' },
  from: { type: 'string', value: DATE_VALUE, help: 'only the export dates from this one on (with or without --to)' },
  to: { type: 'string', value: DATE_VALUE, help: 'only the export dates up to this one (with or without --from)' },
} as const satisfies FlagSpecs

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

/** The flag values a history command reads through this module. */
export interface HistoryValues {
  readonly table?: string | undefined
  readonly config?: string | undefined
  readonly out?: string | undefined
  readonly 'glue-database'?: string | undefined
  readonly stack?: string | undefined
  readonly 'pseudonymization-key-file'?: string | undefined
  readonly 'log-format'?: string | undefined
  readonly date?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly 'dry-run'?: boolean | undefined
  readonly 'batch-size'?: string | undefined
}

/** The dates asked for, checked before anything is read: undefined for every date. */
type DateSelection = { readonly from: string; readonly to: string; readonly text: string } | undefined

const dateFlag = (flag: string, value: string): string => {
  const problem = exportDateProblem(value)
  if (problem) throw new UsageError(`--${flag} ${problem}, got "${value}"`)
  return value
}

/** `--date D`, or `--from D` and/or `--to D`; a bad date or an empty range is a usage error. */
export const dateSelection = (values: HistoryValues): DateSelection => {
  const { date, from, to } = values
  if (date !== undefined && (from !== undefined || to !== undefined)) {
    throw new UsageError('--date names one export date, --from and --to a range: give one or the other')
  }
  if (date !== undefined) return { from: dateFlag('date', date), to: date, text: `dt=${date}` }
  if (from === undefined && to === undefined) return undefined
  const first = from === undefined ? '0000-01-01' : dateFlag('from', from)
  const last = to === undefined ? '9999-12-31' : dateFlag('to', to)
  if (first > last) throw new UsageError(`--from ${from} is after --to ${to}: the range holds no date`)
  const text = [from && `from dt=${from}`, to && `to dt=${to}`].filter(Boolean).join(' ')
  return { from: first, to: last, text }
}

/** The table's stored dates the selection picks; none is a usage error naming the table's dates. */
const selectedDates = async (
  store: WarehouseStore,
  table: TableConfig,
  selection: DateSelection,
): Promise<string[] | undefined> => {
  if (selection === undefined) return undefined
  const all = await storedDates(store, table.name)
  const picked = all.filter((date) => date >= selection.from && date <= selection.to)
  if (picked.length > 0) return picked
  const held = all.length === 0 ? 'none' : `${all.length}, dt=${all[0]} to dt=${all.at(-1)}`
  throw new UsageError(
    `${table.name} has no export date ${selection.text} (its dates: ${held})`,
    'pick dates the table has; npm run query -- "SELECT DISTINCT dt FROM <table>" lists them',
  )
}

/** The command's configuration input, warehouse and key file, from its flags. */
export const commandOf = (values: HistoryValues) =>
  exportCommandOf(
    {
      config: values.config,
      out: values.out,
      'glue-database': values['glue-database'],
      stack: values.stack,
      'pseudonymization-key-file': values['pseudonymization-key-file'],
      'log-format': values['log-format'],
    },
    REPROCESS_FLAGS,
  )

/**
 * The command's configuration and table: one of `--config`'s, else the warehouse's (by name or id; `store`
 * undefined: no warehouse is read, and the flag is the table's name, or its id).
 */
const pickTable = async (
  flag: string,
  command: ReturnType<typeof commandOf>,
  store: WarehouseStore | undefined,
): Promise<{ config: ConfigWithoutSource; table: TableConfig }> => {
  const { source: _source, ...withoutSource } = command.configInput
  if (command.configFile !== undefined) {
    const config = parseConfigWithoutSource(withoutSource, command.configOrigin)
    return { config, table: configuredTable(flag, config.tables) }
  }
  const named =
    store !== undefined
      ? await publishedTable(flag, store).then(({ key, ...table }) => (key ? { ...table, key: [...key] } : table))
      : flag.includes('=')
        ? parseTableFlag(flag)
        : TABLE_NAME_PATTERN.test(flag)
          ? { id: flag, name: flag }
          : { id: flag }
  const config = parseConfigWithoutSource({ ...withoutSource, tables: [named] }, command.configOrigin)
  return { config, table: config.tables[0]! }
}

/** The command's table, dates and everything it writes through; `what` is its one line of progress. */
export const openHistoryCommand = async (
  values: HistoryValues,
  output: TerminalOutput,
  what: (table: TableConfig, dates: readonly string[] | undefined) => string,
) => {
  const selection = dateSelection(values)
  const command = commandOf(values)
  const { store, catalog } = await openWarehouse(command.warehouse)
  const { config, table } = await pickTable(values.table!, command, store)
  const dates = await selectedDates(store, table, selection)
  const pseudonymizationKey = await readPseudonymizationKey(command.pseudonymizationKeyFile)
  const telemetry = terminalTelemetry(output, { logFormat: command.logFormat, reading: 'warehouse' })
  telemetry.info(what(table, dates))
  return {
    config,
    table,
    store,
    dates,
    deps: {
      store,
      catalog,
      telemetry,
      spoolDirectory: path.join(os.tmpdir(), 'inventory-export-spool'),
      pseudonymizationKey,
    },
  }
}

/**
 * What a command's `--aws-event` is made from: the table (without opening the warehouse), the deployed key, which
 * is therefore required (`needed` says what for), and `--batch-size`.
 */
export const awsEventInput = async (
  values: HistoryValues,
  needed: { readonly why: string; readonly docs: string },
): Promise<{ table: TableConfig; key: PseudonymizationKey; batchSize: number | undefined }> => {
  if (values['dry-run'] === true) {
    throw new UsageError('--dry-run and --aws-event do not go together: --aws-event changes nothing either')
  }
  const dated = ['date', 'from', 'to'].filter((flag) => values[flag as keyof HistoryValues] !== undefined)
  if (dated.length > 0) {
    throw new UsageError(
      `--${dated[0]} and --aws-event do not go together: the state machine works on every date of the table`,
    )
  }
  const command = commandOf(values)
  const { table } = await pickTable(values.table!, command, undefined)
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

export const plural = (n: number, word: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? word : `${word}s`}`
