/**
 * The warehouse of `--out s3://BUCKET[/PREFIX]` or `--stack NAME`: the Lambda's S3 store and, with a Glue database,
 * its Glue catalog, with the operator's credentials as the AWS SDK finds them (AWS_PROFILE, SSO, AWS_ACCESS_KEY_ID...)
 * and its usual settings (AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_GLUE). One listing under the prefix comes
 * first, so a wrong bucket or missing rights end the command before anything is downloaded.
 */
import { GlueClient } from '@aws-sdk/client-glue'
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { loadGlueTableCatalog, loadS3WarehouseStore, type TableCatalog, type WarehouseStore } from '../export/index.ts'
import { S3_HINTS, type S3Location, s3WarehouseFailure } from './s3-errors.ts'
import { readStackOutputs, StackOutput } from './stack-outputs.ts'
import { AwsUnavailableError } from './verify-errors.ts'

/** An S3 `--out` (with its `--glue-database`), or `--stack`. */
export type S3Target =
  | (S3Location & { readonly kind: 's3'; readonly glueDatabase: string | undefined })
  | { readonly kind: 'stack'; readonly stackName: string }
type ResolvedTarget = S3Location & { readonly glueDatabase: string | undefined }

export const openS3Warehouse = async (
  target: S3Target,
): Promise<{ readonly store: WarehouseStore; readonly catalog: TableCatalog | undefined }> => {
  const location = target.kind === 'stack' ? await stackLocation(target.stackName) : target
  const client = new S3Client({})
  await checkRegion(client, `--out ${location.url}`)
  await checkBucket(client, location)
  const S3WarehouseStore = await loadS3WarehouseStore()
  const store = new S3WarehouseStore(client, location.bucket, location.prefix)
  const glueTableCatalog = location.glueDatabase === undefined ? undefined : await loadGlueTableCatalog()
  const catalog = glueTableCatalog?.(new GlueClient({}), location.glueDatabase!, store.root)
  return { store, catalog }
}

/** Without a region the SDK's request fails as if the network did: the missing setting is named instead. */
const checkRegion = async (client: { config: { region: () => Promise<string> } }, what: string): Promise<string> => {
  try {
    return await client.config.region()
  } catch (error) {
    throw new AwsUnavailableError(`${what}: no AWS region is set`, error, {
      ...S3_HINTS,
      network:
        "set AWS_REGION to the bucket's region (or use a profile that has one: AWS_PROFILE); nothing was written",
    })
  }
}

/** Lists one key under the prefix: the bucket exists, and these credentials may list where the export writes. */
const checkBucket = async (client: S3Client, location: S3Location): Promise<void> => {
  try {
    await client.send(
      new ListObjectsV2Command({
        Bucket: location.bucket,
        ...(location.prefix === '' ? {} : { Prefix: `${location.prefix}/` }),
        MaxKeys: 1,
      }),
    )
  } catch (error) {
    throw s3WarehouseFailure(location, error)
  }
}

const STACK_HINTS = {
  ...S3_HINTS,
  credentials:
    "sign in to the stack's account and region (AWS_PROFILE, aws sso login; AWS_REGION) with cloudformation:DescribeStacks on the stack, and check its name (deployment.stackName); nothing was written",
}

/** The stack's bucket, prefix and Glue database, from its outputs. */
const stackLocation = async (stackName: string): Promise<ResolvedTarget> => {
  // Loaded only with --stack.
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation')
  const client = new CloudFormationClient({})
  try {
    const region = await checkRegion(client, `cannot read stack ${stackName}`)
    const outputs = await readStackOutputs(client, { stackName, region, hints: STACK_HINTS }, [
      StackOutput.BUCKET,
      StackOutput.PREFIX,
      StackOutput.DATABASE,
    ])
    const [bucket, prefix] = [outputs[StackOutput.BUCKET]!, outputs[StackOutput.PREFIX]!]
    return {
      url: `s3://${bucket}/${prefix} (stack ${stackName})`,
      bucket,
      prefix,
      glueDatabase: outputs[StackOutput.DATABASE],
    }
  } finally {
    client.destroy()
  }
}
