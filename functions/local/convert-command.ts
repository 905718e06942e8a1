/**
 * `npm run convert`: moves a table's history between the Hive layout and Apache Iceberg, in place and without
 * calling the service; the configuration's `tableFormat` then says the layout the next export writes.
 */
import { convertTable, UsageError } from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, parseFlags } from './flags.ts'
import { historyFlags, openHistoryCommand, plural } from './history-command.ts'
import type { TerminalOutput } from './terminal.ts'

const FORMATS = ['iceberg', 'hive'] as const

export const CONVERT_FLAGS = {
  table: { type: 'string', value: 'NAME|ID', help: 'the table to convert, by its name or its saved table id' },
  to: { type: 'string', value: 'iceberg|hive', help: 'the layout to move the table to' },
  ...historyFlags({
    config: 'the configuration the table is in (its export settings and lease wait are read from it)',
    out: 'the warehouse to convert in: a folder (default ./warehouse), or S3, with your AWS\ncredentials (AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...; AWS_REGION)',
    key: 'not used by a conversion, which changes no value',
  }),
} as const satisfies FlagSpecs

const CONVERT_USAGE = `Usage: npm run convert -- --table NAME|ID --to iceberg|hive [--config FILE] [--out DIR|s3://BUCKET[/PREFIX]]

Moves every export date of the table to the other layout without downloading or rewriting any row: to Iceberg,
each date's Parquet object becomes the date's data file, one snapshot per date; back to Hive, each date's current
Iceberg file is copied to the date's object. Analysts see the whole history in the old layout until every date is
in place, then in the new one (on AWS, the Glue table changes in one update). Then set "tableFormat" in the
configuration to the same layout: an export refuses a table whose layout differs from its setting
(TABLE_FORMAT_CHANGED). A stopped conversion is finished by running it again.

${flagHelp(CONVERT_FLAGS)}`

export const runConvertCommand = async (argv: readonly string[], output: TerminalOutput): Promise<ExitCode> => {
  const values = parseFlags(CONVERT_FLAGS, argv).values
  if (values.help) {
    output.out(CONVERT_USAGE)
    return ExitCode.OK
  }
  if (values.table === undefined) throw new UsageError('--table is required: the table to convert')
  const to = FORMATS.find((format) => format === values.to)
  if (to === undefined) {
    throw new UsageError(
      values.to === undefined
        ? '--to is required: the layout to move the table to'
        : `--to ${values.to} is not a layout`,
      'npm run convert -- --table NAME --to iceberg (or --to hive)',
    )
  }
  // `--to` here is the layout, not the last date of the other history commands: a conversion takes every date.
  const { config, table, deps } = await openHistoryCommand(
    { ...values, to: undefined },
    output,
    (t) => `${t.name}: moving every export date to the ${to === 'iceberg' ? 'Iceberg' : 'Hive'} layout`,
  )
  const result = await convertTable(table, config.export, deps, to)
  for (const date of result.moved) output.out(`${result.table}: dt=${date}: moved`)
  output.out(
    `${result.table}: ${plural(result.moved.length, 'date')} moved; the table is in the ${to === 'iceberg' ? 'Iceberg' : 'Hive'} layout with ${plural(result.dates, 'date')}: set "tableFormat": "${to}" on it in the configuration`,
  )
  return ExitCode.OK
}
