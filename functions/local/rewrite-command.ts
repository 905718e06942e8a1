/**
 * `npm run rewrite`: after `columnTypes`, `columns.drop` or `columns.pseudonymize` changed a published column
 * (the export refuses the table with HISTORY_REWRITE_NEEDED), every date of the table is written again from its
 * own Parquet with the current settings, then the registry and the catalog move; `--dry-run` lists the dates, and
 * `--aws-event` prints the input of the stack's state machine, which does the same in AWS.
 */
import { rewriteEvent, rewriteHistory, UsageError } from '../export/index.ts'
import { REPROCESS_FLAGS } from './args.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, parseFlags } from './flags.ts'
import { awsEventInput, BATCH_SIZE_FLAG, KEEP_VERSIONS_FLAG, openHistoryCommand } from './history-command.ts'
import { formatBytes, type TerminalOutput } from './terminal.ts'

const { date: _date, table: _table, ...SHARED } = REPROCESS_FLAGS

export const REWRITE_FLAGS = {
  table: {
    type: 'string',
    value: 'NAME|ID',
    help: 'the configured table to rewrite (with --config); without one, ID=NAME',
  },
  'dry-run': { type: 'boolean', help: 'print the dates, rows and bytes that would change, and change nothing' },
  'aws-event': {
    type: 'boolean',
    help: "print the deployed state machine's input for this rewrite and change nothing; it carries\nthe key check of the deployed pseudonymization key (--pseudonymization-key-file)",
  },
  ...KEEP_VERSIONS_FLAG,
  ...BATCH_SIZE_FLAG,
  ...SHARED,
} as const satisfies FlagSpecs

const REWRITE_USAGE = `Usage: npm run rewrite -- --table NAME [--dry-run] --config FILE [--out DIR|s3://BUCKET[/PREFIX]]
       npm run rewrite -- --table NAME --aws-event [--batch-size N] --config FILE --pseudonymization-key-file FILE

Brings every export date of the table in line with its columnTypes, columns.drop and columns.pseudonymize, after
one of them changed a published column (the export refuses the table with HISTORY_REWRITE_NEEDED until then).
Each date is read from its own Parquet, written through the export's own naming, typing and publishing, and
replaced atomically, or left as it was; its rows keep their run id and export time. The registry, the catalog
and the views move once every date is done, so a stopped rewrite is finished by running it again, and a finished
one changes nothing. A newly pseudonymized column needs --pseudonymization-key-file. With --aws-event it prints
the input of the stack's state machine (HistoryStateMachineArn), which rewrites the dates in batches in AWS.

${flagHelp(REWRITE_FLAGS)}`

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${n === 1 ? word : `${word}s`}`

export const runRewriteCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const values = parseFlags(REWRITE_FLAGS, argv).values
  if (values.help) {
    output.out(REWRITE_USAGE)
    return ExitCode.OK
  }
  if (values.table === undefined) throw new UsageError('--table is required: the table to rewrite')
  const selector = { table: values.table, config: values.config }
  const own = { withValue: ['--table', '--batch-size'], switches: ['--dry-run', '--aws-event', '--keep-versions'] }
  const keepVersions = values['keep-versions'] === true
  if (values['aws-event'] === true) {
    const { table, key, batchSize } = await awsEventInput(argv, selector, own, values, {
      why: 'the event carries the key check of the deployed key, with which the function pseudonymizes a newly pseudonymized column',
      docs: 'docs/operations.md#rewriting-on-aws',
    })
    output.out(JSON.stringify(rewriteEvent(key, table.name, batchSize, keepVersions), undefined, 2))
    return ExitCode.OK
  }
  const { config, table, deps } = await openHistoryCommand(argv, selector, own, output)
  const dryRun = values['dry-run'] === true
  const result = await rewriteHistory(config, table, deps, {
    dryRun,
    keepVersions,
    onDate: (date) =>
      output.err(
        `${table.name}: dt=${date.exportDate}: ${plural(date.rows, 'row')}, ${formatBytes(date.bytes)} ${dryRun ? 'would be rewritten' : date.record?.status === 'failed' ? 'not rewritten: the rewrite failed, the date is as it was' : 'rewritten'}`,
      ),
  })
  for (const warning of result.warnings) output.err(`${table.name}: warning: ${warning}`)
  const rows = result.dates.reduce((sum, d) => sum + d.rows, 0)
  const bytes = result.dates.reduce((sum, d) => sum + d.bytes, 0)
  const dates = `${plural(result.dates.length, 'date')} (${plural(rows, 'row')}, ${formatBytes(bytes)})`
  output.out(
    result.failed
      ? `${result.table}: stopped at dt=${result.failed.exportDate}; run the same command again once its error is fixed`
      : dryRun
        ? `${result.table}: ${dates} would be rewritten; nothing was changed`
        : `${result.table}: ${dates} rewritten; every date is in line with the configuration and the registry has moved${result.versionsDeleted > 0 ? `; ${plural(result.versionsDeleted, 'earlier object version')} deleted` : ''}`,
  )
  return result.failed ? ExitCode.TABLE_FAILED : ExitCode.OK
}
