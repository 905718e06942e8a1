/**
 * The deployment section of the configuration: the settings only the CDK app reads (schedule, secret, bucket,
 * Athena, alarms, VPC, Lambda). It extends the runtime schema (functions/export/core/config.ts), whose `deployment`
 * holds only what the function and the CLI need, so synth checks every deploy-only key strictly.
 */
import * as z from 'zod'
import {
  ConfigError,
  configProblems,
  deepFreeze,
  defaultTableName,
  type ExportConfig,
  ExportConfigObject,
  isTimeZone,
  StackNameSchema,
  stackResourceNames,
  withDerivedNames,
} from '../functions/export/index.ts'
import { DEFAULT_DISTRIBUTED_FROM_DATES } from './constructs/history-operations.ts'
import { scheduleExpressionProblems, scheduleIntervalHours } from './schedule.ts'

const ScheduleSchema = z.strictObject({
  expression: z
    .string()
    .superRefine((expression, ctx) => {
      for (const message of scheduleExpressionProblems(expression)) ctx.addIssue({ code: 'custom', message })
    })
    .default('cron(0 2 * * ? *)')
    .describe(
      'EventBridge Scheduler expression (default: daily at 02:00), checked at synth as Scheduler checks it: six-field `cron(min hour day-of-month month day-of-week year)` with `?` in exactly one day field, or `rate(1 hour)` / `rate(6 hours)` (singular for 1)',
    ),
  timeZone: z
    .string()
    .refine(isTimeZone, 'must be an IANA time zone such as "Europe/Berlin" or "UTC"')
    .default('UTC')
    .describe('IANA time zone the cron expression is read in'),
  periodHours: z
    .number()
    .positive()
    .max(24 * 31)
    .default(24)
    .describe(
      'Length of one schedule period in hours; the alarms count runs in periods. Must match the expression when it runs evenly (every N minutes or hours, daily, weekly on one day)',
    ),
  flexibleWindowMinutes: z
    .int()
    .min(0)
    .max(1440)
    .default(15)
    .describe('Each table starts at a random moment within this many minutes after its time (0: exactly on time)'),
})

/** Days the workgroup's query results are kept (`deployment.athena.resultsExpirationDays`). */
export const DEFAULT_ATHENA_RESULTS_DAYS = 7

/** CloudWatch alarms look back at most 7 days (1 day for periods under an hour). */
const alarmLookBackHours = (periodHours: number): number => (periodHours < 1 ? 24 : 168)

const KmsKeyArnSchema = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/,
    'must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)',
  )

/** AWS-only settings read by the CDK app. */
export const DeploymentConfigSchema = z
  .strictObject({
    stackName: StackNameSchema,
    schedule: ScheduleSchema.prefault({}),
    secret: z
      .strictObject({
        nameOrArn: z
          .string()
          .min(1)
          .optional()
          .describe('Existing secret holding the token (name or ARN); when absent the stack creates an empty one'),
        kmsKeyArn: KmsKeyArnSchema.optional().describe(
          'Customer managed KMS key that encrypts that secret; the function gets kms:Decrypt on it',
        ),
        retainOnDelete: z
          .boolean()
          .default(true)
          .describe(
            'Keep the secret the stack creates when the stack is deleted, so the token survives a redeploy (point `nameOrArn` at it, or delete it by hand)',
          ),
      })
      .prefault({})
      .refine((secret) => secret.kmsKeyArn === undefined || secret.nameOrArn !== undefined, {
        message: 'applies only to an existing secret (set nameOrArn); the secret the stack creates uses its own key',
        path: ['kmsKeyArn'],
      }),
    pseudonymizationSecret: z
      .strictObject({
        nameOrArn: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Existing secret holding the key of `tables[].columns.pseudonymize` (name or ARN, at least 32 characters); when absent and a table pseudonymizes, the stack creates one with a random 64-character value and keeps it when the stack is deleted (a new key changes every pseudonym)',
          ),
      })
      .prefault({})
      .describe('The pseudonymization key (docs/personal-data.md); only the function may read it'),
    bucket: z
      .strictObject({
        name: z
          .string()
          .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
          .optional()
          .describe('Existing bucket to write to; when absent the stack creates one'),
        kmsKeyArn: KmsKeyArnSchema.optional().describe(
          'Customer managed KMS key of that bucket (SSE-KMS); the function gets kms:GenerateDataKey and kms:Decrypt on it',
        ),
      })
      .prefault({})
      .refine((bucket) => bucket.kmsKeyArn === undefined || bucket.name !== undefined, {
        message: 'applies only to an existing bucket (set name); the bucket the stack creates uses S3-managed keys',
        path: ['kmsKeyArn'],
      }),
    athena: z
      .strictObject({
        workgroup: z
          .string()
          .regex(/^[a-zA-Z0-9._-]{1,128}$/)
          .optional()
          .describe(
            'Athena workgroup created for analysts; default `inventory` for the default stack name, else the stack name',
          ),
        bytesScannedCutoffPerQuery: z
          .int()
          .min(10 * 1024 * 1024)
          .default(10 * 1024 ** 3)
          .describe('Per-query bytes-scanned limit of the workgroup (default 10 GiB)'),
        resultsExpirationDays: z
          .int()
          .min(1)
          .max(3650)
          .default(DEFAULT_ATHENA_RESULTS_DAYS)
          .describe(
            "Days the workgroup's query results (`athena-results/` in a bucket the stack creates) are kept, their earlier versions a day more: results hold the rows analysts selected, erased ones included, and an erasure does not reach them",
          ),
        tableQueries: z
          .boolean()
          .default(true)
          .describe(
            'Save three named queries per table (rows per date, a sample of the latest export, days exported); each is a stack resource, so switch off for a few hundred tables',
          ),
        namedQueries: z
          .array(
            z.strictObject({
              name: z.string().min(1).max(128).describe('Name in the Athena console'),
              description: z.string().min(1).max(1024).optional().describe('What the query answers'),
              sql: z.string().min(1).max(262_144).describe('The SQL, against the tables and views of the database'),
            }),
          )
          .default([])
          .refine((queries) => new Set(queries.map((q) => q.name)).size === queries.length, 'names must be unique')
          .describe(
            'Named queries saved in the workgroup besides the ones made for every table (rows per date, a sample of the latest export, days exported)',
          ),
      })
      .prefault({}),
    alarms: z
      .strictObject({
        failedRunsToAlarm: z
          .int()
          .min(1)
          .default(2)
          .describe('Runs with 401/403/5xx failures that persisted after retries, out of `evaluationRuns`, that page'),
        evaluationRuns: z
          .int()
          .min(1)
          .default(3)
          .describe('Window of runs (schedule periods) the failure alarm looks at'),
        staleAfterPeriods: z
          .int()
          .min(1)
          .default(2)
          .describe('Page when no run succeeded for this many schedule periods'),
        emails: z.array(z.email()).default([]).describe('E-mail addresses subscribed to the alarm topic'),
      })
      .prefault({})
      .refine((a) => a.failedRunsToAlarm <= a.evaluationRuns, {
        message: 'failedRunsToAlarm must not exceed evaluationRuns',
        path: ['failedRunsToAlarm'],
      }),
    vpc: z
      .strictObject({
        vpcId: z
          .string()
          .regex(/^vpc-([0-9a-f]{8}|[0-9a-f]{17})$/)
          .describe('VPC id'),
        availabilityZones: z.array(z.string().min(1)).min(1).describe('Availability zones of the subnets'),
        subnetIds: z
          .array(z.string().regex(/^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/))
          .min(1)
          .describe('Private subnets with a route to the service and to S3, Secrets Manager, Glue, CloudWatch'),
        securityGroupIds: z
          .array(z.string().regex(/^sg-([0-9a-f]{8}|[0-9a-f]{17})$/))
          .min(1)
          .describe('Security groups allowing outbound HTTPS to the service'),
      })
      .optional()
      .describe('Place the function in a VPC, for a service on a private network'),
    lambda: z
      .strictObject({
        memoryMb: z
          .int()
          .min(256)
          .max(10_240)
          .default(1769)
          .describe(
            'Function memory; 1769 MB is one vCPU, 3538 MB two (CSV parsing then gets a core of its own: large tables export about 1.6x faster)',
          ),
        timeoutSeconds: z.int().min(60).max(900).default(900).describe('Function timeout'),
        ephemeralStorageMb: z
          .int()
          .min(512)
          .max(10_240)
          .default(2048)
          .describe('/tmp size; the spool (about the CSV) of the largest table must fit'),
        sourceMaps: z
          .boolean()
          .default(false)
          .describe(
            'Ship a source map with the function and enable it, for stack traces with source lines (adds about 5 MB to the bundle and slows cold starts)',
          ),
      })
      .prefault({}),
    historyOperations: z
      .strictObject({
        enabled: z
          .boolean()
          .default(false)
          .describe(
            "Deploy the state machine that runs erasure requests on AWS, one invocation per batch of export dates (docs/personal-data.md); it also makes (or imports) the pseudonymization key's secret, which the requests' digests are made with, lets the function delete the raw bodies of tables with `archiveRaw` and the earlier versions of every table's dated data and raw bodies, and adds the history function the state machine invokes",
          ),
        maxConcurrency: z
          .int()
          .min(1)
          .max(40)
          .default(4)
          .describe(
            "Batches the state machine runs at once, each one invocation of the history function, whose reserved concurrency this is; 40 is an inline Map's most",
          ),
        memoryMb: z
          .int()
          .min(512)
          .max(10_240)
          .default(1769)
          .describe(
            'Memory of the history function, which runs the batches (one date at a time, a row group of it in memory: the rewrite bench peaked at 426 MiB on dates of 100 MB of CSV); 1769 MB is one vCPU',
          ),
        distributedFromDates: z
          .int()
          .min(1)
          .max(100_000)
          .default(DEFAULT_DISTRIBUTED_FROM_DATES)
          .describe(
            'Requests of at least this many export dates run their batches in a Step Functions Distributed Map, each batch a child execution, rather than an inline Map, whose one execution history holds at most 25,000 events',
          ),
      })
      .prefault({})
      .describe('History operations on AWS: erasure requests fanned out by Step Functions'),
  })
  .superRefine((deployment, ctx) => {
    const { expression, periodHours } = deployment.schedule
    const interval = scheduleIntervalHours(expression)
    // The staleness and failure alarms count runs in periods: a wrong period makes them page too early or never.
    if (interval !== undefined && interval !== periodHours) {
      ctx.addIssue({
        code: 'custom',
        path: ['schedule', 'periodHours'],
        message: `is ${periodHours}, but ${expression} runs every ${interval} hours; set periodHours to ${interval}`,
      })
    }
    const limit = alarmLookBackHours(deployment.schedule.periodHours)
    for (const key of ['evaluationRuns', 'staleAfterPeriods'] as const) {
      if (deployment.alarms[key] * deployment.schedule.periodHours > limit) {
        ctx.addIssue({
          code: 'custom',
          path: ['alarms', key],
          message: `${key} × schedule.periodHours is ${deployment.alarms[key] * deployment.schedule.periodHours} hours, more than the ${limit} hours CloudWatch alarms can look back`,
        })
      }
    }
  })

/** The whole configuration as the stack reads it: the runtime sections and the full `deployment`. */
export const DeployConfigSchema = ExportConfigObject.safeExtend({
  deployment: DeploymentConfigSchema.prefault({}),
}).transform((config) => {
  const withNames = withDerivedNames(config)
  const { deployment } = withNames
  const workgroup = deployment.athena.workgroup ?? stackResourceNames(deployment.stackName).athenaWorkgroup
  return { ...withNames, deployment: { ...deployment, athena: { ...deployment.athena, workgroup } } }
})

type ParsedDeployConfig = z.output<typeof DeployConfigSchema>
export type DeploymentConfig = Readonly<ParsedDeployConfig['deployment']>
/** The runtime configuration with the full, validated deployment section. */
export type DeployConfig = Readonly<Omit<ExportConfig, 'deployment'> & { deployment: DeploymentConfig }>

/** Validates unknown input (the parsed config file) into the stack's typed configuration, naming each bad field. */
export const parseDeployConfig = (input: unknown, origin = 'configuration'): DeployConfig => {
  const result = DeployConfigSchema.safeParse(input)
  if (!result.success) throw new ConfigError(origin, configProblems(DeployConfigSchema, result.error.issues))
  const parsed = result.data
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}
