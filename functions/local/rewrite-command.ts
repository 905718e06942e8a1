/**
 * `npm run rewrite`: after `columnTypes`, `columns.drop` or `columns.pseudonymize` changed a published column
 * (the export refuses the table with HISTORY_REWRITE_NEEDED), every date of the table is written again from its
 * own Parquet with the current settings, then the registry and the catalog move; `--dry-run` lists the dates, and
 * `--aws-event` prints the input of the stack's state machine, which does the same in AWS.
 */
import { rewriteEvent, rewriteHistory, UsageError } from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, parseFlags } from './flags.ts'
import {
  awsEventInput,
  BATCH_SIZE_FLAG,
  DATE_FLAGS,
  historyFlags,
  KEEP_VERSIONS_FLAG,
  openHistoryCommand,
  plural,
} from './history-command.ts'
import { formatBytes, type TerminalOutput } from './terminal.ts'

export const REWRITE_FLAGS = {
  table: {
    type: 'string',
    value: 'NAME|ID',
    help: 'the configured table to rewrite, by its name or its saved table id',
  },
  ...DATE_FLAGS,
  'dry-run': { type: 'boolean', help: 'print the dates, rows and bytes that would change, and change nothing' },
  'aws-event': {
    type: 'boolean',
    help: "print the deployed state machine's input for this rewrite and change nothing; it carries\nthe key check of the deployed pseudonymization key (--pseudonymization-key-file)",
  },
  ...KEEP_VERSIONS_FLAG,
  ...BATCH_SIZE_FLAG,
  ...historyFlags({
    config:
      'the configuration whose columnTypes, columns.drop and columns.pseudonymize\nevery date is brought in line with (required)',
    out: 'the warehouse to rewrite in: a folder (default ./warehouse), or S3, with your\nAWS credentials (AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...; AWS_REGION)',
    key: 'file holding the pseudonymization key (else INVENTORY_PSEUDONYMIZATION_KEY),\nfor a newly pseudonymized column or a table with recorded erasure requests',
  }),
} as const satisfies FlagSpecs

const REWRITE_USAGE = `Usage: npm run rewrite -- --table NAME|ID --config FILE [--date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD]
                       [--dry-run] [--out DIR|s3://BUCKET[/PREFIX]] [--pseudonymization-key-file FILE]
       npm run rewrite -- --table NAME|ID --config FILE --aws-event [--batch-size N] --pseudonymization-key-file FILE

Brings every export date of the table in line with its columnTypes, columns.drop and columns.pseudonymize, after
one of them changed a published column (the export refuses the table with HISTORY_REWRITE_NEEDED until then).
Each date is read from its own Parquet, written through the export's own naming, typing and publishing, and
replaced atomically, or left as it was; its rows keep their run id and export time. The registry, the catalog
and the views move once every date is done (with --date, --from or --to, once the other dates are done too), so
a stopped rewrite is finished by running it again, and a finished one changes nothing. With --aws-event it prints
the input of the stack's state machine (HistoryStateMachineArn), which rewrites the dates in batches in AWS.

${flagHelp(REWRITE_FLAGS)}`

export const runRewriteCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const values = parseFlags(REWRITE_FLAGS, argv).values
  if (values.help) {
    output.out(REWRITE_USAGE)
    return ExitCode.OK
  }
  if (values.table === undefined) throw new UsageError('--table is required: the table to rewrite')
  if (values.config === undefined) {
    throw new UsageError(
      '--config is required: the configuration whose column settings every date is brought in line with',
      'npm run rewrite -- --table NAME --config FILE (the file the export refused the table with)',
    )
  }
  const keepVersions = values['keep-versions'] === true
  if (values['aws-event'] === true) {
    const { table, key, batchSize } = await awsEventInput(values, {
      why: 'the event carries the key check of the deployed key, with which the function pseudonymizes a newly pseudonymized column',
      docs: 'docs/operations.md#rewriting-on-aws',
    })
    output.out(JSON.stringify(rewriteEvent(key, table.name, batchSize, keepVersions), undefined, 2))
    return ExitCode.OK
  }
  const dryRun = values['dry-run'] === true
  const { config, table, deps, dates } = await openHistoryCommand(values, output, (t, picked) => {
    const which = picked ? plural(picked.length, 'export date') : 'every export date'
    return `${t.name}: ${dryRun ? 'checking' : 'bringing'} ${which} ${dryRun ? 'against' : 'in line with'} ${values.config}`
  })
  // The plan and the summary are the command's result: one stream, in order.
  const result = await rewriteHistory(config, table, deps, {
    dryRun,
    ...(dates ? { dates } : {}),
    finish: true,
    keepVersions,
    onDate: (date) =>
      output.out(
        `${table.name}: dt=${date.exportDate}: ${plural(date.rows, 'row')}, ${formatBytes(date.bytes)} ${dryRun ? 'would be rewritten' : date.record?.status === 'failed' ? 'not rewritten: the rewrite failed, the date is as it was' : 'rewritten'}`,
      ),
  })
  for (const warning of result.warnings) output.err(`${table.name}: warning: ${warning}`)
  const rows = result.dates.reduce((sum, d) => sum + d.rows, 0)
  const bytes = result.dates.reduce((sum, d) => sum + d.bytes, 0)
  const counted = `${plural(result.dates.length, 'date')} (${plural(rows, 'row')}, ${formatBytes(bytes)})`
  const versions =
    result.versionsDeleted > 0 ? `; ${plural(result.versionsDeleted, 'earlier object version')} deleted` : ''
  output.out(
    result.failed
      ? `${result.table}: stopped at dt=${result.failed.exportDate}; run the same command again once its error is fixed`
      : dryRun
        ? `${result.table}: ${counted} would be rewritten; nothing was changed`
        : !result.finished
          ? `${result.table}: ${counted} rewritten; other dates are not yet in line, so the registry has not moved: rewrite them too (without --date, --from or --to) to finish${versions}`
          : result.registryMoved
            ? `${result.table}: ${counted} rewritten; every date is in line with the configuration and the registry has moved${versions}`
            : `${result.table}: ${counted} rewritten; every date ${result.dates.length === 0 ? 'was' : 'is'} in line with the configuration, and so was the registry${versions}`,
  )
  return result.failed ? ExitCode.TABLE_FAILED : ExitCode.OK
}
