/**
 * `npm run verify -- --stack NAME [--table NAME] [--no-invoke] [--region REGION]`: proves a deployed stack works,
 * with the operator's own AWS credentials (the SDK's usual chain: AWS_PROFILE, SSO, environment variables).
 * The SDK clients are devDependencies of this command: they never enter the Lambda bundle.
 */
import { AthenaClient } from '@aws-sdk/client-athena'
import { CloudFormationClient } from '@aws-sdk/client-cloudformation'
import { LambdaClient } from '@aws-sdk/client-lambda'
import { S3Client } from '@aws-sdk/client-s3'
import { UsageError } from '../export/index.ts'
import { ExitCode } from './exit-code.ts'
import { type FlagSpecs, flagHelp, HELP_FLAG, parseFlags } from './flags.ts'
import type { TerminalOutput } from './terminal.ts'
import { reportLines, type VerifyClients, verifyStack } from './verify.ts'
import { AwsUnavailableError } from './verify-errors.ts'

/** `npm run verify`: a deployed stack, with the operator's credentials. */
const VERIFY_FLAGS = {
  stack: { type: 'string', value: 'NAME', help: 'the deployed stack (deployment.stackName); required' },
  table: {
    type: 'string',
    value: 'NAME',
    help: "the table to export and query (default: the stack's first table)",
  },
  'no-invoke': {
    type: 'boolean',
    help: "do not run the export: check the table's latest run (_runs/latest/<table>.json) instead",
  },
  region: { type: 'string', value: 'REGION', help: "the stack's region (default: AWS_REGION or the profile's region)" },
  help: HELP_FLAG,
} as const satisfies FlagSpecs

export const VERIFY_USAGE = `Usage: npm run verify -- --stack NAME [flags]

Proves a deployed stack works end to end with your AWS credentials: reads the stack's outputs, runs the export
for one table (as the schedule does), then queries the table, its <table>_latest view and its <table>_changes
view in the stack's Athena workgroup. Run it after every deploy.

${flagHelp(VERIFY_FLAGS)}

Needs: cloudformation:DescribeStacks on the stack, lambda:InvokeFunction on its function (not with --no-invoke),
s3:GetObject on the warehouse (with --no-invoke), and the stack's analyst policy (AnalystPolicyArn) for Athena.

Exit status: 0 every check passed; 1 some check failed, or AWS could not be reached; 2 bad usage.`

interface VerifyCommand {
  readonly help: boolean
  readonly stackName: string
  readonly table: string | undefined
  readonly noInvoke: boolean
  readonly region: string | undefined
}

const parseVerifyArgs = (argv: readonly string[]): VerifyCommand => {
  const { values, positionals } = parseFlags(VERIFY_FLAGS, argv, { positionals: true })
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  if (values.help !== true && values.stack === undefined) throw new UsageError('--stack NAME is required')
  return {
    help: values.help === true,
    stackName: values.stack ?? '',
    table: values.table,
    noInvoke: values['no-invoke'] === true,
    region: values.region,
  }
}

/** The clients of the operator's credentials, in `region` when given. */
const defaultVerifyClients = (region: string | undefined): VerifyClients => {
  const config = region === undefined ? {} : { region }
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    athena: new AthenaClient(config),
    s3: new S3Client(config),
  }
}

export const runVerifyCommand = async (
  argv: readonly string[],
  output: TerminalOutput,
  makeClients: (region: string | undefined) => VerifyClients = defaultVerifyClients,
  /** Between polls of a running query. @default a 2 s timer */
  sleep?: (ms: number) => Promise<void>,
): Promise<ExitCode> => {
  const command = parseVerifyArgs(argv)
  if (command.help) {
    output.out(VERIFY_USAGE)
    return ExitCode.OK
  }
  const clients = makeClients(command.region)
  let region: string
  try {
    region = await clients.cloudFormation.config.region()
  } catch (error) {
    throw new AwsUnavailableError('no AWS region is set', error)
  }
  const report = await verifyStack(clients, {
    stackName: command.stackName,
    table: command.table,
    noInvoke: command.noInvoke,
    region,
    ...(sleep === undefined ? {} : { sleep }),
  })
  for (const line of reportLines(report)) output.out(line)
  return report.ok ? ExitCode.OK : ExitCode.TABLE_FAILED
}
