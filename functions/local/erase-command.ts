/**
 * `npm run erase`: an erasure request (GDPR Art. 17). Every date of one table (or those `--date`, `--from`, `--to`
 * pick) is rewritten without the rows whose columns hold the given values, through the export's own path, and the
 * request is recorded in the warehouse as keyed digests, so every later export leaves those rows out too;
 * `--dry-run` counts them and writes nothing; `--list` and `--forget ID` manage the recorded requests. The values
 * are never printed: only the columns, the dates and the counts.
 */
import { readFile } from 'node:fs/promises'
import {
  type ErasureRequest,
  eraseEvent,
  eraseRows,
  forgetErasureRequest,
  isErasureRequestId,
  listErasureRequests,
  MAX_HISTORY_EVENT_BYTES,
  parseConfigWithoutSource,
  UsageError,
  type ValueCondition,
  type WarehouseStore,
} from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, type FlagValues, flagHelp, parseFlags } from './flags.ts'
import {
  awsEventInput,
  BATCH_SIZE_FLAG,
  commandOf,
  DATE_FLAGS,
  historyFlags,
  KEEP_VERSIONS_FLAG,
  openHistoryCommand,
  plural,
} from './history-command.ts'
import { configuredTable, publishedTable } from './published-tables.ts'
import type { TerminalOutput } from './terminal.ts'
import { openWarehouse } from './warehouse-target.ts'

export const ERASE_FLAGS = {
  table: {
    type: 'string',
    value: 'NAME|ID',
    help: 'the table to erase from: one of the --config tables, or without one a table\nthe warehouse publishes (by its name or its saved table id)',
  },
  where: {
    type: 'string',
    multiple: true,
    value: 'COLUMN=VALUE',
    help: 'remove the rows whose column holds this value; repeatable: the values of one\ncolumn are several people, columns given together must all match one row; for\na pseudonymized column give the value in clear (its pseudonym is matched)',
  },
  'where-file': {
    type: 'string',
    multiple: true,
    value: 'COLUMN=FILE',
    help: 'the values of a column, one a line (repeatable): one request for many people',
  },
  ...DATE_FLAGS,
  'dry-run': { type: 'boolean', help: 'print the dates and rows that would change, and change nothing' },
  list: { type: 'boolean', help: 'list the erasure requests recorded in the warehouse (with --table: its own)' },
  forget: {
    type: 'string',
    value: 'ID',
    help: 'forget a recorded erasure request: the next exports publish its rows again\nif the service still has them',
  },
  'aws-event': {
    type: 'boolean',
    help: "print the deployed state machine's input for this request and change nothing: each value as\nits digests, made with the deployed pseudonymization key (--pseudonymization-key-file)",
  },
  ...KEEP_VERSIONS_FLAG,
  ...BATCH_SIZE_FLAG,
  ...historyFlags({
    config:
      "the configuration holding the table (its key, columnTypes and controls);\nwithout it, the warehouse's registry says them",
    out: 'the warehouse to erase in: a folder (default ./warehouse), or S3, with your\nAWS credentials (AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...; AWS_REGION)',
    key: 'file holding the pseudonymization key (else INVENTORY_PSEUDONYMIZATION_KEY):\nthe request is recorded as digests made with it',
  }),
} as const satisfies FlagSpecs

const ERASE_USAGE = `Usage: npm run erase -- --table NAME|ID (--where COLUMN=VALUE | --where-file COLUMN=FILE)...
                     [--date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD] [--dry-run] [--config FILE]
                     [--out DIR|s3://BUCKET[/PREFIX]] [--pseudonymization-key-file FILE]
       npm run erase -- --list [--table NAME|ID] [--out DIR|s3://BUCKET[/PREFIX]]
       npm run erase -- --forget ID [--out DIR|s3://BUCKET[/PREFIX]]
       npm run erase -- --table NAME --where COLUMN=VALUE... --aws-event [--batch-size N] --config FILE
                     --pseudonymization-key-file FILE

Removes the rows that match from every export date of the table (or the dates --date, --from and --to pick):
each date's object is rewritten through the same naming, typing and publishing as an export and replaced
atomically, or left as it was. The raw archive of a date that held a matching row is deleted. The request is
recorded in the warehouse as keyed digests (never the values), so every later export of the table leaves its
rows out (see --list and --forget). A rerun goes on where a stopped one left off; a finished one changes nothing.
The values are never printed or recorded in clear, only the columns, the dates and the row counts.

${flagHelp(ERASE_FLAGS)}`

/** What an erasure cannot reach, said after every one (docs/personal-data.md, "What an erasure reaches"). */
const NOT_REACHED =
  "not reached by an erasure: copies outside the warehouse (Athena query results saved outside the workgroup's own location, downloads, extracts); the workgroup's results expire by the bucket's lifecycle"

type EraseValues = FlagValues<typeof ERASE_FLAGS>

/** `COLUMN=VALUE` (or `COLUMN=FILE`): the text on each side of the first `=`, both non-empty. */
const columnAnd = (flag: string, form: string): [string, string] => {
  const at = flag.indexOf('=')
  // The value is never quoted back: it is the personal data being erased.
  if (at <= 0 || at === flag.length - 1) throw new UsageError(`${form} with a column and a value`)
  return [flag.slice(0, at), flag.slice(at + 1)]
}

/** The values of `--where` and of each `--where-file` (one a line; blank lines skipped), once each. */
const conditionsOf = async (values: EraseValues): Promise<ValueCondition[]> => {
  const conditions = (values.where ?? []).map((flag) => columnAnd(flag, '--where must be COLUMN=VALUE'))
  for (const flag of values['where-file'] ?? []) {
    const [column, file] = columnAnd(flag, '--where-file must be COLUMN=FILE')
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw new UsageError(
        `--where-file ${column}=${file}: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      )
    }
    const lines = text.split(/\r?\n/).filter((line) => line !== '')
    if (lines.length === 0) throw new UsageError(`--where-file ${column}=${file}: the file holds no value`)
    conditions.push(...lines.map((value): [string, string] => [column, value]))
  }
  if (conditions.length === 0) {
    throw new UsageError('--where or --where-file is required: COLUMN=VALUE of the rows to remove')
  }
  const unique = new Map(conditions.map(([column, value]) => [JSON.stringify([column, value]), { column, value }]))
  return [...unique.values()]
}

/** `e_mail (3 values), device_id`: the columns, and how many values each has when more than one. */
const describeColumns = (conditions: readonly { column: string }[]): string => {
  const counts = new Map<string, number>()
  for (const { column } of conditions) counts.set(column, (counts.get(column) ?? 0) + 1)
  return [...counts].map(([column, n]) => (n === 1 ? column : `${column} (${n} values)`)).join(', ')
}

export const runEraseCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const values = parseFlags(ERASE_FLAGS, argv).values
  if (values.help) {
    output.out(ERASE_USAGE)
    return ExitCode.OK
  }
  if (values.list === true || values.forget !== undefined) return manageRequests(values, output)
  if (values.table === undefined) throw new UsageError('--table is required: the table to erase from')
  const conditions = await conditionsOf(values)
  const keepVersions = values['keep-versions'] === true
  if (values['aws-event'] === true) {
    const { table, key, batchSize } = await awsEventInput(values, {
      why: "the event carries each value as its digest with the deployed key, so that the value never enters the state machine's history",
      docs: 'docs/personal-data.md#erasure-requests-on-aws',
    })
    const event = JSON.stringify(eraseEvent(key, table.name, conditions, batchSize, keepVersions), undefined, 2)
    if (Buffer.byteLength(event) > MAX_HISTORY_EVENT_BYTES) {
      throw new UsageError(
        `the state machine's input would be ${Math.ceil(Buffer.byteLength(event) / 1024)} KiB, more than the ${MAX_HISTORY_EVENT_BYTES / 1024} KiB it may carry; split the values over several requests`,
      )
    }
    output.out(event)
    return ExitCode.OK
  }
  const dryRun = values['dry-run'] === true
  const by = describeColumns(conditions)
  const { config, table, deps, dates } = await openHistoryCommand(values, output, (t, picked) =>
    dryRun
      ? `${t.name}: looking for the rows matching ${by} in ${picked ? plural(picked.length, 'export date') : 'every export date'}`
      : `${t.name}: erasing the rows matching ${by} from ${picked ? plural(picked.length, 'export date') : 'every export date'}`,
  )
  // The plan and the summary are the command's result: one stream, in order.
  const result = await eraseRows(config, table, conditions, deps, {
    dryRun,
    ...(dates ? { dates } : {}),
    keepVersions,
    onDate: (date) =>
      output.out(
        `${table.name}: dt=${date.exportDate}: ${plural(date.rows, 'row')} ${dryRun ? 'would be removed' : date.record?.status === 'failed' ? 'matched; the rewrite failed, the date is as it was' : 'removed'}`,
      ),
  })
  const rows = result.dates.reduce((sum, d) => sum + d.rows, 0)
  const listed = result.dates.length > 0 ? ` (${result.dates.map((d) => `dt=${d.exportDate}`).join(', ')})` : ''
  output.out(
    result.failed
      ? `${result.table}: stopped at dt=${result.failed.exportDate}; run the same command again once its error is fixed`
      : `${result.table}: ${plural(rows, 'row')} matching ${by} ${dryRun ? 'would be removed from' : 'removed from'} ${plural(result.dates.length, 'date')}${listed}${result.versionsDeleted > 0 ? `; ${plural(result.versionsDeleted, 'earlier object version')} deleted` : ''}`,
  )
  if (result.request !== undefined) {
    const { recorded, isNew } = result.request
    output.out(
      `${result.table}: erasure request ${recorded.id} ${isNew ? 'recorded' : 'was recorded already'}: every later export of ${result.table} leaves its rows out (npm run erase -- --list)`,
    )
  }
  if (!dryRun) output.err(`${result.table}: ${NOT_REACHED}`)
  return result.failed ? ExitCode.TABLE_FAILED : ExitCode.OK
}

/** A request in a line: its table, columns and count of values, never the digests. */
const describeRequest = (request: ErasureRequest): string =>
  `${request.table} (${describeColumns(request.where)}; recorded ${request.recordedAt})`

/** `--list` and `--forget ID`: the requests the warehouse records. */
const manageRequests = async (values: EraseValues, output: TerminalOutput): Promise<ExitCode> => {
  const own = values.list === true ? '--list' : '--forget'
  const clash = [
    'where',
    'where-file',
    'dry-run',
    'aws-event',
    'batch-size',
    'keep-versions',
    'date',
    'from',
    'to',
    'list',
    'forget',
  ]
    .filter((flag) => values[flag as keyof EraseValues] !== undefined && `--${flag}` !== own)
    .concat(own === '--forget' && values.table !== undefined ? ['table'] : [])
  if (clash.length > 0) {
    throw new UsageError(
      `${own} goes with --out (or --stack) only${own === '--list' ? ' and --table' : ''}; drop --${clash[0]}`,
    )
  }
  const command = commandOf(values)
  const { store } = await openWarehouse(command.warehouse)
  const requests = await listErasureRequests(store)
  if (values.forget !== undefined) return forget(values.forget, requests, store, output)
  const table = values.table === undefined ? undefined : await tableName(values.table, command, store)
  const shown = requests.filter((r) => table === undefined || r.table === table)
  if (shown.length === 0) {
    output.out(`no erasure request is recorded${table ? ` for ${table}` : ''} in ${store.root}`)
    return ExitCode.OK
  }
  const rows = [
    ['request', 'table', 'recorded', 'columns'],
    ...shown.map((r) => [r.id, r.table, r.recordedAt, describeColumns(r.where)]),
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows)
    output.out(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
  output.out(
    `${plural(shown.length, 'erasure request')} recorded in ${store.root}: every export of their tables leaves their rows out`,
  )
  return ExitCode.OK
}

/** The published name `--table` stands for, with `--list`. */
const tableName = async (flag: string, command: ReturnType<typeof commandOf>, store: WarehouseStore) => {
  if (command.configFile === undefined) return (await publishedTable(flag, store)).name
  const { source: _source, ...withoutSource } = command.configInput
  return configuredTable(flag, parseConfigWithoutSource(withoutSource, command.configOrigin).tables).name
}

const forget = async (
  id: string,
  requests: readonly ErasureRequest[],
  store: WarehouseStore,
  output: TerminalOutput,
): Promise<ExitCode> => {
  if (!isErasureRequestId(id)) {
    throw new UsageError(`--forget must name a request as --list prints it (12 hex digits), got "${id}"`)
  }
  const request = requests.find((r) => r.id === id)
  if (request === undefined) {
    throw new UsageError(
      `no erasure request ${id} is recorded in ${store.root}`,
      'npm run erase -- --list shows the recorded requests (with the same --out)',
    )
  }
  await forgetErasureRequest(store, request)
  output.out(
    `forgot erasure request ${id} of ${describeRequest(request)}: the next export of ${request.table} publishes its rows again if the service still has them`,
  )
  return ExitCode.OK
}
