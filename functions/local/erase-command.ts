/**
 * `npm run erase`: an erasure request (GDPR Art. 17). Every date of one table is rewritten without the rows whose
 * columns hold the given values, through the export's own path; `--dry-run` counts them and writes nothing.
 * The values are never printed: only the columns, the dates and the counts.
 */
import { eraseEvent, eraseRows, UsageError, type ValueCondition } from '../export/index.ts'
import { REPROCESS_FLAGS } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, parseFlags } from './flags.ts'
import { awsEventInput, BATCH_SIZE_FLAG, KEEP_VERSIONS_FLAG, openHistoryCommand } from './history-command.ts'
import type { TerminalOutput } from './terminal.ts'

const { date: _date, table: _table, ...SHARED } = REPROCESS_FLAGS

export const ERASE_FLAGS = {
  table: {
    type: 'string',
    value: 'NAME|ID',
    help: 'the configured table to erase from (with --config); without one, ID=NAME',
  },
  where: {
    type: 'string',
    multiple: true,
    value: 'COLUMN=VALUE',
    help: 'remove the rows whose column holds this value (repeatable: every one must match);\nfor a pseudonymized column give the value in clear: its pseudonym is matched',
  },
  'dry-run': { type: 'boolean', help: 'print the dates and rows that would change, and change nothing' },
  'aws-event': {
    type: 'boolean',
    help: "print the deployed state machine's input for this request and change nothing: each value as\nits digests, made with the deployed pseudonymization key (--pseudonymization-key-file)",
  },
  ...KEEP_VERSIONS_FLAG,
  ...BATCH_SIZE_FLAG,
  ...SHARED,
} as const satisfies FlagSpecs

const ERASE_USAGE = `Usage: npm run erase -- --table NAME --where COLUMN=VALUE [--where ...] [--dry-run] --config FILE [--out DIR|s3://BUCKET[/PREFIX]]

Removes the rows that match from every export date of the table: each date's object is rewritten through the
same naming, typing and publishing as an export and replaced atomically, or left as it was. The raw archive of a
date that held a matching row is deleted. A rerun goes on where a stopped one left off; a finished one changes
nothing. The values are never printed or recorded, only the columns, the dates and the row counts.

${flagHelp(ERASE_FLAGS)}`

/** What an erasure cannot reach, said after every one (docs/personal-data.md, "What an erasure reaches"). */
const NOT_REACHED =
  "not reached by an erasure: copies outside the warehouse (Athena query results saved outside the workgroup's own location, downloads, extracts); the workgroup's results expire by the bucket's lifecycle"

const condition = (flag: string): ValueCondition => {
  const at = flag.indexOf('=')
  // The value is never quoted back: it is the personal data being erased.
  if (at <= 0 || at === flag.length - 1) throw new UsageError('--where must be COLUMN=VALUE with a column and a value')
  return { column: flag.slice(0, at), value: flag.slice(at + 1) }
}

export const runEraseCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const values = parseFlags(ERASE_FLAGS, argv).values
  if (values.help) {
    output.out(ERASE_USAGE)
    return ExitCode.OK
  }
  if (values.table === undefined) throw new UsageError('--table is required: the table to erase from')
  if (values.where === undefined) throw new UsageError('--where is required: COLUMN=VALUE of the rows to remove')
  const conditions = values.where.map(condition)
  const own = {
    withValue: ['--where', '--table', '--batch-size'],
    switches: ['--dry-run', '--aws-event', '--keep-versions'],
  }
  const keepVersions = values['keep-versions'] === true
  const selector = { table: values.table, config: values.config }
  if (values['aws-event'] === true) {
    const { table, key, batchSize } = await awsEventInput(argv, selector, own, values, {
      why: "the event carries each value as its digest with the deployed key, so that the value never enters the state machine's history",
      docs: 'docs/personal-data.md#erasure-requests-on-aws',
    })
    output.out(JSON.stringify(eraseEvent(key, table.name, conditions, batchSize, keepVersions), undefined, 2))
    return ExitCode.OK
  }
  const { config, table, deps } = await openHistoryCommand(argv, selector, own, output)
  const dryRun = values['dry-run'] === true
  const result = await eraseRows(config, table, conditions, deps, {
    dryRun,
    keepVersions,
    onDate: (date) =>
      output.err(
        `${table.name}: dt=${date.exportDate}: ${date.rows.toLocaleString('en-US')} ${date.rows === 1 ? 'row' : 'rows'} ${dryRun ? 'would be removed' : date.record?.status === 'failed' ? 'matched; the rewrite failed, the date is as it was' : 'removed'}`,
      ),
  })
  const rows = result.dates.reduce((sum, d) => sum + d.rows, 0)
  const by = result.columns.join(', ')
  output.out(
    result.failed
      ? `${result.table}: stopped at dt=${result.failed.exportDate}; run the same command again once its error is fixed`
      : `${result.table}: ${rows.toLocaleString('en-US')} ${rows === 1 ? 'row' : 'rows'} matching ${by} ${dryRun ? 'would be removed from' : 'removed from'} ${result.dates.length} ${result.dates.length === 1 ? 'date' : 'dates'}${result.dates.length > 0 ? ` (${result.dates.map((d) => `dt=${d.exportDate}`).join(', ')})` : ''}${result.versionsDeleted > 0 ? `; ${result.versionsDeleted.toLocaleString('en-US')} earlier object ${result.versionsDeleted === 1 ? 'version' : 'versions'} deleted` : ''}`,
  )
  if (!dryRun) output.err(`${result.table}: ${NOT_REACHED}`)
  return result.failed ? ExitCode.TABLE_FAILED : ExitCode.OK
}
