/**
 * A deployed stack's outputs (infra/export-stack.ts), read with the operator's credentials: by `npm run verify`
 * and by `--stack` of `npm start` and `npm run reprocess`. Only the CloudFormation client is loaded here.
 */
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation'
import { type AwsHints, AwsUnavailableError, StackNotFoundError, StackOutputMissingError } from './verify-errors.ts'

/** The outputs the local commands read. */
export const StackOutput = {
  FUNCTION: 'ExportFunctionName',
  WORKGROUP: 'AthenaWorkgroupName',
  DATABASE: 'GlueDatabaseName',
  BUCKET: 'WarehouseBucketName',
  PREFIX: 'WarehousePrefix',
  TABLES: 'ExportedTables',
} as const
type StackOutput = (typeof StackOutput)[keyof typeof StackOutput]

/** DescribeStacks -> { outputKey: value }, after checking that every output in `needed` is there. */
export const readStackOutputs = async (
  client: CloudFormationClient,
  stack: { readonly stackName: string; readonly region: string; readonly hints?: AwsHints },
  needed: readonly StackOutput[],
): Promise<Record<string, string>> => {
  let outputs: { OutputKey?: string; OutputValue?: string }[]
  try {
    const answer = await client.send(new DescribeStacksCommand({ StackName: stack.stackName }))
    outputs = answer.Stacks?.[0]?.Outputs ?? []
  } catch (error) {
    const { name, message } = error as Error
    if (name === 'ValidationError' && /does not exist/.test(message)) {
      throw new StackNotFoundError(stack.stackName, stack.region)
    }
    throw new AwsUnavailableError(`cannot read stack ${stack.stackName} in ${stack.region}`, error, stack.hints)
  }
  const values = Object.fromEntries(outputs.map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']))
  const missing = needed.filter((key) => !(key in values))
  if (missing.length > 0) throw new StackOutputMissingError(stack.stackName, missing)
  return values
}
