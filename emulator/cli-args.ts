/** Command-line flags of `npm run emulator`, parsed once into a typed object. */
import { parseArgs } from 'node:util'
import { closestKey } from '../functions/export/core/closest-key.ts'
import type { DemoRowCounts } from './demo-tables.ts'
import { EmulatorError, EmulatorErrorCode } from './errors.ts'
import type { UpstreamChange } from './upstream-changes.ts'

export const DEFAULT_CLI_PORT = 8080

export const USAGE = `Usage: npm run emulator -- [flags]

Runs the local stand-in of the inventory service's export API until Ctrl-C.
--keep-rows and --drop-column act out an upstream change (a narrowed filter, a column taken out of the saved
table) from the start, to try the exporter's upstream change guards: export once without them, restart the
stand-in with them, export the next date.

Flags:
  --port <n>             port to listen on; 0 picks a free one (default ${DEFAULT_CLI_PORT})
  --host <addr>          address to bind (default 127.0.0.1)
  --seed <n>             seed of the demo data; same seed, same bytes (default 1)
  --rows <table>=<n>     rows of a demo table: devices, software or users; repeat or comma-separate
                         (default devices=2500,software=10000,users=800)
  --keep-rows <id>=<share>
                         serve only this share (0 to 1) of the table's rows, e.g. 1001=0.05 (repeatable)
  --drop-column <id>=<header>
                         stop serving this column of the table, e.g. "1001=OS Version" (repeatable)
  --help                 show this text
`

/** An upstream change asked for on the command line; it applies from the day the stand-in starts. */
export type CliUpstreamChange = Omit<UpstreamChange, 'from'>

export interface CliOptions {
  readonly help: boolean
  readonly port: number
  readonly host: string
  readonly seed: number
  readonly rows: DemoRowCounts
  readonly changes: readonly CliUpstreamChange[]
}

const ROW_TABLES = ['devices', 'software', 'users'] as const

const integerFlag = (name: string, value: string | undefined, fallback: number, problems: string[]): number => {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isSafeInteger(parsed))
    problems.push(`--${name} must be an integer, got "${value}"`)
  return parsed
}

const parseRows = (values: readonly string[], problems: string[]): DemoRowCounts => {
  const rows: Record<string, number> = {}
  for (const pair of values.flatMap((value) => value.split(','))) {
    const [table = '', count = ''] = pair.split('=', 2)
    const parsed = Number(count.replaceAll('_', ''))
    if (!(ROW_TABLES as readonly string[]).includes(table)) {
      problems.push(`--rows "${pair}": table must be one of ${ROW_TABLES.join(', ')}`)
    } else if (count === '' || !Number.isSafeInteger(parsed) || parsed < 0) {
      problems.push(`--rows "${pair}": count must be a non-negative integer`)
    } else rows[table] = parsed
  }
  return rows
}

/** `<id>=<value>` pairs of a flag; each bad one is a problem naming the flag. */
const pairs = (flag: string, values: readonly string[], problems: string[]): [string, string][] =>
  values.flatMap((value) => {
    const at = value.indexOf('=')
    if (at > 0 && at < value.length - 1) return [[value.slice(0, at), value.slice(at + 1)] as [string, string]]
    problems.push(`--${flag} must be <table id>=<value>, got "${value}"`)
    return []
  })

const parseChanges = (keepRows: readonly string[], dropColumns: readonly string[], problems: string[]) => {
  const changes: CliUpstreamChange[] = []
  for (const [tableId, share] of pairs('keep-rows', keepRows, problems)) {
    const keep = Number(share)
    if (share.trim() === '' || !(keep >= 0 && keep <= 1)) {
      problems.push(`--keep-rows "${tableId}=${share}": the share must be a number from 0 to 1`)
    } else changes.push({ tableId, keepRows: keep })
  }
  for (const [tableId, header] of pairs('drop-column', dropColumns, problems)) {
    changes.push({ tableId, dropColumns: [header] })
  }
  return changes
}

/** Parses argv (without node and the script); throws an EmulatorError naming every bad flag. */
export const parseCliArgs = (argv: readonly string[]): CliOptions => {
  let values: ReturnType<typeof parseFlags>['values']
  try {
    values = parseFlags(argv).values
  } catch (error) {
    throw new EmulatorError(EmulatorErrorCode.USAGE_INVALID, flagMessage((error as Error).message))
  }
  const problems: string[] = []
  const port = integerFlag('port', values.port, DEFAULT_CLI_PORT, problems)
  if (port < 0 || port > 65_535) problems.push(`--port must be from 0 to 65535, got ${port}`)
  const options: CliOptions = {
    help: values.help ?? false,
    port,
    host: values.host ?? '127.0.0.1',
    seed: integerFlag('seed', values.seed, 1, problems),
    rows: parseRows(values.rows ?? [], problems),
    changes: parseChanges(values['keep-rows'] ?? [], values['drop-column'] ?? [], problems),
  }
  if (problems.length > 0) {
    throw new EmulatorError(EmulatorErrorCode.USAGE_INVALID, problems.join('; '))
  }
  return options
}

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  rows: { type: 'string', multiple: true },
  'keep-rows': { type: 'string', multiple: true },
  'drop-column': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const

const parseFlags = (argv: readonly string[]) =>
  parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: FLAGS })

/**
 * parseArgs' message for an unknown flag, with the flag's likely spelling as the export's commands give it, and
 * without its advice to "place it after '--'", which is wrong here.
 */
const flagMessage = (message: string): string => {
  const unknown = /^Unknown option '(--?)([^']+)'/.exec(message)
  if (!unknown) return message
  const guess = unknown[1] === '--' ? closestKey(unknown[2]!, Object.keys(FLAGS)) : undefined
  return `unknown flag ${unknown[1]}${unknown[2]}${guess ? `; did you mean --${guess}?` : ''}`
}
