/**
 * Command-line flags of the local runner -> the shared configuration input plus run options.
 * Flags and a `--config` file may be combined; flags win. The token's variable comes from environment.ts.
 */
import { readFile } from 'node:fs/promises'
import {
  checkTokenCharacters,
  type Environment,
  type ExportConfigInput,
  exportDateProblem,
  loadConfigFile,
  PSEUDONYMIZATION_KEY_VARIABLE,
  processEnvironment,
  TABLE_FORMATS,
  type TableFormatName,
  TokenUnavailableError,
  UsageError,
} from '../export/index.ts'
import { type FlagSpecs, type FlagValues, flagHelp, HELP_FLAG, parseFlags } from './flags.ts'
import { parseWarehouseTarget, type WarehouseTarget } from './warehouse-target.ts'

export const TOKEN_ENVIRONMENT_VARIABLE = 'INVENTORY_TOKEN'

const SERVICE_FLAGS = {
  'base-url': { type: 'string', value: 'URL', help: 'the inventory service, e.g. https://inventory.example.com' },
  table: {
    type: 'string',
    multiple: true,
    value: 'ID[=NAME]',
    help: 'a saved table id, optionally with its warehouse name (repeatable);\nNAME defaults to table_<id> and must be lowercase letters, digits and _',
  },
  format: {
    type: 'string',
    value: 'csv|xlsx',
    help: 'which export to read for the --table flags (and the demo): the CSV (default) or the\nworkbook; both land the same',
  },
  'token-file': {
    type: 'string',
    value: 'FILE',
    help: `file holding the API token (else the ${TOKEN_ENVIRONMENT_VARIABLE} environment variable)`,
  },
  config: {
    type: 'string',
    value: 'FILE',
    help: 'a configuration file (the same JSON the CDK app deploys); flags override it',
  },
  'allow-insecure-http': { type: 'boolean', help: 'allow plain http to a non-loopback host (logged as a warning)' },
} as const satisfies FlagSpecs

const DATE_FLAG = {
  type: 'string',
  value: 'YYYY-MM-DD',
  help: 'export date, the dt= partition (default: today, UTC)',
} as const
const OUT_FLAG = {
  type: 'string',
  value: 'DIR|s3://BUCKET[/PREFIX]',
  help: 'warehouse folder (default ./warehouse), or S3, written with your AWS credentials\n(AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...; AWS_REGION)',
} as const
/** Where an export or a rebuild writes besides a folder: S3 and Glue, as the deployed Lambda does. */
const AWS_FLAGS = {
  'glue-database': {
    type: 'string',
    value: 'NAME',
    help: 'with an s3:// --out: also create or update the tables and views in this Glue\ndatabase, as the Lambda does',
  },
  stack: {
    type: 'string',
    value: 'NAME',
    help: 'write where a deployed stack writes (its outputs: bucket, prefix and Glue database),\ninstead of --out and --glue-database',
  },
} as const satisfies FlagSpecs
const LOG_FORMAT_FLAG = {
  type: 'string',
  value: 'text|json',
  help: 'progress and log lines on stderr as plain text (default) or as one JSON object a line',
} as const
const KEY_FILE_FLAG = {
  type: 'string',
  value: 'FILE',
  help: `file holding the key of "columns.pseudonymize" (else the ${PSEUDONYMIZATION_KEY_VARIABLE}\nenvironment variable)`,
} as const
const DEMO_FLAG = {
  type: 'boolean',
  help: 'use the built-in stand-in service and its demo tables (may be combined with --out,\n--stack, --date, and --config FILE without a source: its tables and settings)',
} as const

/** `npm start`. */
export const EXPORT_FLAGS = {
  ...SERVICE_FLAGS,
  out: OUT_FLAG,
  ...AWS_FLAGS,
  date: DATE_FLAG,
  concurrency: { type: 'string', value: 'N', help: 'tables downloaded at once (default 2)' },
  only: { type: 'string', multiple: true, value: 'ID|NAME', help: 'export only this configured table (repeatable)' },
  'accept-changes': {
    type: 'boolean',
    help: "publish what the upstream change guards would hold (ROW_COUNT_DROP,\nCOLUMNS_REMOVED/ADDED set to hold, COLUMN_IDENTITY_AMBIGUOUS), after checking\nthe change in the service's UI",
  },
  'pseudonymization-key-file': KEY_FILE_FLAG,
  'log-format': LOG_FORMAT_FLAG,
  demo: DEMO_FLAG,
  help: HELP_FLAG,
} as const satisfies FlagSpecs

/**
 * `npm run check`: the flags of `npm start`, so that a start command line checks as it is. It reads the service
 * only and writes nothing: the flags about writing are taken and said to be ignored (check-command.ts).
 */
export const CHECK_FLAGS = {
  ...EXPORT_FLAGS,
  date: { ...DATE_FLAG, help: 'the day the demo stand-in acts out (default: today, UTC)' },
  only: { ...EXPORT_FLAGS.only, help: 'check only this configured table (repeatable)' },
  demo: { ...DEMO_FLAG, help: 'check the built-in stand-in service and its demo tables' },
} as const satisfies FlagSpecs

/** `npm run reprocess`: reads the archive, never the service. */
export const REPROCESS_FLAGS = {
  date: { ...DATE_FLAG, help: 'the export date to rebuild (required)' },
  config: {
    type: 'string',
    value: 'FILE',
    help: 'the configuration whose tables (and per-table options) to rebuild; --table picks among them',
  },
  table: {
    type: 'string',
    multiple: true,
    value: 'NAME|ID',
    help: 'a table to rebuild (repeatable): one of the --config tables, or without one a table\npublished in the warehouse (by its name or its saved table id; ID=NAME for any other)',
  },
  out: {
    ...OUT_FLAG,
    help: 'the warehouse to rebuild in: a folder (default ./warehouse), or S3, written with your\nAWS credentials (AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...; AWS_REGION)',
  },
  ...AWS_FLAGS,
  'pseudonymization-key-file': KEY_FILE_FLAG,
  'log-format': LOG_FORMAT_FLAG,
  help: HELP_FLAG,
} as const satisfies FlagSpecs

export const EXPORT_USAGE = `Usage: npm start -- [flags]

Exports saved tables of the inventory service as Parquet, partitioned by date.
With no flags at all (or with --demo), starts the built-in stand-in service with demo data and exports it.

${flagHelp(EXPORT_FLAGS)}

Exit status: 0 every table exported; 1 some table failed (the others are exported); 2 bad usage or configuration.
All commands: npm run help`

const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export interface ExportCommand {
  readonly help: boolean
  /** True when no service was named: run the demo against the built-in stand-in. */
  readonly demo: boolean
  readonly configInput: Partial<ExportConfigInput> & Record<string, unknown>
  readonly configOrigin: string
  /** `--out`, `--glue-database` or `--stack`: a folder, or S3 (and Glue). */
  readonly warehouse: WarehouseTarget
  /** `--config`, when given. */
  readonly configFile: string | undefined
  readonly exportDate: string | undefined
  readonly tokenFile: string | undefined
  /** `--pseudonymization-key-file`: the key of `columns.pseudonymize` (else the environment's). */
  readonly pseudonymizationKeyFile: string | undefined
  /** `--format`: applied to the `--table` flags (and the demo tables). */
  readonly tableFormat: TableFormatName | undefined
  /** Configured tables (ids or names) to export; every table when empty. */
  readonly only: readonly string[]
  readonly acceptChanges: boolean
  /** `--log-format`: plain lines (default) or JSON objects on stderr. */
  readonly logFormat: LogFormat
}

/** Parses the flags of export, check or reprocess (`flags`: which of them the command takes). */
export const parseExportArgs = async (
  argv: readonly string[],
  flags: FlagSpecs = EXPORT_FLAGS,
): Promise<ExportCommand> => exportCommandOf(parseFlags(flags, argv).values, flags)

/** The command that flag values (of `flags`, parsed) make: the configuration input, the warehouse, the key file. */
export const exportCommandOf = (values: Flags, flags: FlagSpecs): ExportCommand => {
  const dateProblem = values.date === undefined ? undefined : exportDateProblem(values.date)
  if (dateProblem) throw new UsageError(`--date ${dateProblem}, got "${values.date}"`)
  // reprocess takes no --demo: it reads the archive, never a service.
  const demo = 'demo' in flags ? demoMode(values) : false
  const logFormat = values['log-format'] ?? 'text'
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) {
    throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, got "${logFormat}"`)
  }
  const tableFormat = parseFormatFlag(values.format, values.table !== undefined || values.config === undefined)
  const fromFile = values.config ? readConfigFile(values.config) : {}
  if (demo && fromFile.source !== undefined) {
    throw new UsageError(
      `--demo uses the built-in stand-in, and --config ${values.config} names a service (source); drop its source section, or drop --demo`,
    )
  }
  const configInput: Record<string, unknown> = { ...fromFile }
  const source = { ...(fromFile.source as object | undefined) } as Record<string, unknown>
  if (values['base-url'] !== undefined) source.baseUrl = values['base-url']
  if (values['allow-insecure-http']) source.allowInsecureHttp = true
  configInput.source = source
  if (values.table !== undefined) {
    configInput.tables = values.table.map((flag) => ({
      ...parseTableFlag(flag),
      ...(tableFormat && { format: tableFormat }),
    }))
  }
  if (values.concurrency !== undefined) {
    configInput.export = { ...(fromFile.export as object | undefined), concurrency: Number(values.concurrency) }
  }
  return {
    help: values.help === true,
    demo,
    configInput,
    configOrigin: values.config ? `configuration (${values.config} and flags)` : 'command-line flags',
    warehouse: parseWarehouseTarget(values),
    configFile: values.config,
    exportDate: values.date,
    tokenFile: values['token-file'],
    pseudonymizationKeyFile: values['pseudonymization-key-file'],
    tableFormat,
    only: values.only ?? [],
    acceptChanges: values['accept-changes'] === true,
    logFormat: logFormat as LogFormat,
  }
}

type Flags = FlagValues<typeof EXPORT_FLAGS>

/**
 * The demo runs only when asked for (--demo) or when nothing points at a real service: a --table or --token-file
 * without a source would otherwise quietly export the stand-in's tables and report success.
 */
const demoMode = (values: Flags): boolean => {
  const source = ['base-url', 'config'].filter((flag) => values[flag as keyof Flags] !== undefined)
  const needsSource = ['table', 'token-file', ...WAREHOUSE_FLAGS].filter(
    (flag) => values[flag as keyof Flags] !== undefined,
  )
  if (values.demo && source.length + needsSource.length > 0) {
    // A configuration without a source gives the demo its tables and settings (retention, columnTypes...).
    const clash = [...source, ...needsSource].filter((flag) => !WAREHOUSE_FLAGS.includes(flag) && flag !== 'config')
    if (clash.length > 0) {
      throw new UsageError(`--demo uses the built-in stand-in and its demo tables; drop ${flagList(clash)}`)
    }
  }
  if (!values.demo && source.length === 0 && needsSource.length > 0) {
    throw new UsageError(
      `${flagList(needsSource)} given without a service: add --base-url URL or --config FILE (or --demo for the built-in stand-in)`,
    )
  }
  return values.demo === true || source.length === 0
}

/** Where the demo may be written, too. */
const WAREHOUSE_FLAGS: readonly string[] = ['out', 'glue-database', 'stack']

const flagList = (flags: readonly string[]): string => flags.map((flag) => `--${flag}`).join(', ')

export const parseTableFlag = (value: string): { id: string; name?: string } => {
  const [id, name, ...rest] = value.split('=') as [string, string | undefined, ...string[]]
  // `1=a=b` used to land as table a; a second `=` is a typo, never part of a name.
  if (rest.length > 0) throw new UsageError(`--table must be ID or ID=NAME with one "=", got "${value}"`)
  return name === undefined ? { id } : { id, name }
}

const parseFormatFlag = (value: string | undefined, hasTables: boolean): TableFormatName | undefined => {
  if (value === undefined) return undefined
  if (!(TABLE_FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`--format must be one of ${TABLE_FORMATS.join(', ')}, got "${value}"`)
  }
  if (!hasTables) throw new UsageError('--format applies to --table flags; in a --config file set "format" per table')
  return value as TableFormatName
}

/** The file's JSON object; the flags merge into it before the whole is validated. */
const readConfigFile = (file: string): Record<string, unknown> =>
  loadConfigFile(file, { origin: `--config ${file}`, validate: (json: unknown) => json as Record<string, unknown> })

/** The token from --token-file, else INVENTORY_TOKEN; surrounding white space is dropped. */
export const readToken = async (
  tokenFile: string | undefined,
  environment: Environment = processEnvironment(),
): Promise<string> => {
  if (tokenFile !== undefined) {
    let text: string
    try {
      text = await readFile(tokenFile, 'utf8')
    } catch (error) {
      throw new TokenUnavailableError(`--token-file ${tokenFile}`, error)
    }
    if (text.trim() === '') throw new TokenUnavailableError(`--token-file ${tokenFile} (the file is empty)`)
    return checkTokenCharacters(text.trim(), `--token-file ${tokenFile}`)
  }
  const fromEnvironment = environment[TOKEN_ENVIRONMENT_VARIABLE]?.trim()
  if (!fromEnvironment)
    throw new TokenUnavailableError(`--token-file or ${TOKEN_ENVIRONMENT_VARIABLE} (neither is set)`)
  return checkTokenCharacters(fromEnvironment, TOKEN_ENVIRONMENT_VARIABLE)
}
