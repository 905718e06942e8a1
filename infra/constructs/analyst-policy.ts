/**
 * The managed policy an analyst role attaches to query the warehouse: use the workgroup, read the Glue database
 * and its tables, read the data prefix, and write query results. Nothing else; the statements are pure.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib'
import { Effect, ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam'
import type { IBucket } from 'aws-cdk-lib/aws-s3'
import type { Construct } from 'constructs'
import { acknowledgeWildcardResource } from '../nag.ts'

export interface AnalystAccess {
  readonly bucketArn: string
  readonly prefix: string
  readonly resultsPrefix: string
  readonly workgroupName: string
  readonly glueDatabase: string
  /** Customer managed key of an existing bucket, when it has one. */
  readonly bucketKeyArn?: string | undefined
}

/** What running Athena queries in the workgroup over the warehouse takes. */
export const analystStatements = (stack: Stack, access: AnalystAccess): PolicyStatement[] => {
  const { bucketArn, prefix, resultsPrefix } = access
  const glue = (resource: string, resourceName?: string) =>
    stack.formatArn({
      service: 'glue',
      resource,
      ...(resourceName === undefined ? { arnFormat: ArnFormat.NO_RESOURCE_NAME } : { resourceName }),
    })
  return [
    new PolicyStatement({
      sid: 'QueryInWorkgroup',
      effect: Effect.ALLOW,
      actions: [
        'athena:StartQueryExecution',
        'athena:StopQueryExecution',
        'athena:GetQueryExecution',
        'athena:GetQueryResults',
        'athena:GetQueryResultsStream',
        'athena:GetWorkGroup',
        'athena:ListQueryExecutions',
        'athena:ListNamedQueries',
        'athena:GetNamedQuery',
        'athena:BatchGetNamedQuery',
      ],
      resources: [stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: access.workgroupName })],
    }),
    new PolicyStatement({
      sid: 'ReadWarehouseCatalog',
      effect: Effect.ALLOW,
      actions: ['glue:GetDatabase', 'glue:GetDatabases', 'glue:GetTable', 'glue:GetTables', 'glue:GetPartitions'],
      resources: [glue('catalog'), glue('database', access.glueDatabase), glue('table', `${access.glueDatabase}/*`)],
    }),
    new PolicyStatement({
      sid: 'ReadWarehouseData',
      effect: Effect.ALLOW,
      actions: ['s3:GetObject'],
      resources: [`${bucketArn}/${prefix}/*`],
    }),
    new PolicyStatement({
      sid: 'WriteQueryResults',
      effect: Effect.ALLOW,
      actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
      resources: [`${bucketArn}/${resultsPrefix}*`],
    }),
    new PolicyStatement({
      sid: 'ListWarehouseAndResults',
      effect: Effect.ALLOW,
      actions: ['s3:ListBucket', 's3:GetBucketLocation'],
      resources: [bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${prefix}/*`, `${resultsPrefix}*`, ''] } },
    }),
    ...(access.bucketKeyArn === undefined
      ? []
      : [
          new PolicyStatement({
            sid: 'UseWarehouseKey',
            effect: Effect.ALLOW,
            actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
            resources: [access.bucketKeyArn],
          }),
        ]),
  ]
}

/** The policy, with the few wildcards it needs acknowledged for cdk-nag with their reasons. */
export const analystPolicy = (
  scope: Construct,
  id: string,
  bucket: IBucket,
  access: Omit<AnalystAccess, 'bucketArn'>,
): ManagedPolicy => {
  const stack = Stack.of(scope)
  const policy = new ManagedPolicy(scope, id, {
    // Read by whoever attaches it: pseudonymized columns can be joined but not reversed, as nothing here reads the key.
    description: `Analysts: query the inventory warehouse in Athena workgroup ${access.workgroupName}. Pseudonymized columns hold keyed hashes: they join across tables and dates but cannot be reversed; this policy grants no access to the pseudonymization key`,
    statements: analystStatements(stack, { ...access, bucketArn: bucket.bucketArn }),
  })
  acknowledgeWildcardResource(
    policy,
    `${bucket.bucketArn}/${access.prefix}/*`,
    `Analysts read every table and date under the warehouse prefix "${access.prefix}/"; the wildcard stops there.`,
  )
  acknowledgeWildcardResource(
    policy,
    `${bucket.bucketArn}/${access.resultsPrefix}*`,
    'Athena writes each query result under a new key of the workgroup result prefix; the wildcard stops there.',
  )
  acknowledgeWildcardResource(
    policy,
    stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${access.glueDatabase}/*` }),
    `Analysts read the tables of database "${access.glueDatabase}" only, which grow as saved tables are added.`,
  )
  return policy
}
