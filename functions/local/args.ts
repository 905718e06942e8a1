/**
 * Command-line flags of the local runner -> the shared configuration input plus run options.
 * Flags and a `--config` file may be combined; flags win. The token's variable comes from environment.ts.
 */
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import {
  checkTokenCharacters,
  type Environment,
  type ExportConfigInput,
  exportDateProblem,
  processEnvironment,
  TABLE_FORMATS,
  type TableFormatName,
  TokenUnavailableError,
  UsageError,
} from '../export/index.ts'

export const TOKEN_ENVIRONMENT_VARIABLE = 'INVENTORY_TOKEN'

export const EXPORT_USAGE = `Usage: npm start -- [flags]

Exports saved tables of the inventory service as Parquet, partitioned by date.
With no flags at all (or with --demo), starts the built-in stand-in service with demo data and exports it.

Flags:
  --base-url URL         the inventory service, e.g. https://inventory.example.com
  --table ID[=NAME]      a saved table id, optionally with its warehouse name (repeatable);
                         NAME defaults to table_<id> and must be lowercase letters, digits and _
  --format csv|xlsx      which export to read for the --table flags (and the demo): the CSV (default) or the
                         workbook; both land the same
  --token-file FILE      file holding the API token (else the INVENTORY_TOKEN environment variable)
  --pseudonymization-key-file FILE
                         file holding the key of "columns.pseudonymize" (else the
                         INVENTORY_PSEUDONYMIZATION_KEY environment variable)
  --config FILE          a configuration file (the same JSON the CDK app deploys); flags override it
  --out DIR              warehouse folder (default ./warehouse)
  --date YYYY-MM-DD      export date, the dt= partition (default: today, UTC)
  --concurrency N        tables downloaded at once (default 2)
  --only ID|NAME         export only this configured table (repeatable)
  --accept-changes       publish what the upstream change guards would hold (ROW_COUNT_DROP,
                         COLUMNS_REMOVED/ADDED set to hold), after checking the change in the service's UI
  --allow-insecure-http  allow plain http to a non-loopback host (logged as a warning)
  --demo                 use the built-in stand-in service and its demo tables (may be combined with --out, --date)
  -h, --help             this text

Exit status: 0 every table exported; 1 some table failed (the others are exported); 2 bad usage or configuration.`

export interface ExportCommand {
  readonly help: boolean
  /** True when no service was named: run the demo against the built-in stand-in. */
  readonly demo: boolean
  readonly configInput: Partial<ExportConfigInput> & Record<string, unknown>
  readonly configOrigin: string
  readonly outDir: string
  readonly exportDate: string | undefined
  readonly tokenFile: string | undefined
  /** `--pseudonymization-key-file`: the key of `columns.pseudonymize` (else the environment's). */
  readonly pseudonymizationKeyFile: string | undefined
  /** `--format`: applied to the `--table` flags (and the demo tables). */
  readonly tableFormat: TableFormatName | undefined
  /** Configured tables (ids or names) to export; every table when empty. */
  readonly only: readonly string[]
  readonly acceptChanges: boolean
}

export interface ParseExportOptions {
  /** Whether the command can run against the built-in stand-in (export, check), as opposed to reprocess. */
  readonly demoAllowed?: boolean
}

export const parseExportArgs = async (
  argv: readonly string[],
  { demoAllowed = true }: ParseExportOptions = {},
): Promise<ExportCommand> => {
  let parsed: ReturnType<typeof parseFlags>
  try {
    parsed = parseFlags(argv)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  const dateProblem = values.date === undefined ? undefined : exportDateProblem(values.date)
  if (dateProblem) throw new UsageError(`--date ${dateProblem}, got "${values.date}"`)
  const demo = demoAllowed ? demoMode(values) : rejectDemo(values)
  const tableFormat = parseFormatFlag(values.format, values.table !== undefined || values.config === undefined)
  const fromFile = values.config ? await readConfigFile(values.config) : {}
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
    outDir: values.out ?? 'warehouse',
    exportDate: values.date,
    tokenFile: values['token-file'],
    pseudonymizationKeyFile: values['pseudonymization-key-file'],
    tableFormat,
    only: values.only ?? [],
    acceptChanges: values['accept-changes'] === true,
  }
}

const parseFlags = (argv: readonly string[]) =>
  parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      table: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
      'pseudonymization-key-file': { type: 'string' },
      config: { type: 'string' },
      out: { type: 'string' },
      date: { type: 'string' },
      concurrency: { type: 'string' },
      format: { type: 'string' },
      'allow-insecure-http': { type: 'boolean' },
      only: { type: 'string', multiple: true },
      'accept-changes': { type: 'boolean' },
      demo: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })

type Flags = ReturnType<typeof parseFlags>['values']

/**
 * The demo runs only when asked for (--demo) or when nothing points at a real service: a --table or --token-file
 * without a source would otherwise quietly export the stand-in's tables and report success.
 */
const demoMode = (values: Flags): boolean => {
  const source = ['base-url', 'config'].filter((flag) => values[flag as keyof Flags] !== undefined)
  const needsSource = ['table', 'token-file', 'out'].filter((flag) => values[flag as keyof Flags] !== undefined)
  if (values.demo && source.length + needsSource.length > 0) {
    const clash = [...source, ...needsSource].filter((flag) => flag !== 'out')
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

const rejectDemo = (values: Flags): false => {
  if (values.demo) throw new UsageError('--demo is not available here: this command reads no service')
  return false
}

const flagList = (flags: readonly string[]): string => flags.map((flag) => `--${flag}`).join(', ')

const parseTableFlag = (value: string): { id: string; name?: string } => {
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

const readConfigFile = async (file: string): Promise<Record<string, unknown>> => {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read --config ${file}: ${(error as Error).message}`)
  }
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch (error) {
    throw new UsageError(`--config ${file} is not valid JSON: ${(error as Error).message}`)
  }
}

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
