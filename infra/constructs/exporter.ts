/**
 * The exporter: the bundled function (one per memory size the tables ask for, all from one bundle), its token
 * secret, one schedule per table, failure queues and least-privilege roles.
 */
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Duration, Size, Stack, Stage } from 'aws-cdk-lib'
import { Effect, type PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import {
  Architecture,
  type DestinationConfig,
  type IDestination,
  type IFunction,
  Runtime,
} from 'aws-cdk-lib/aws-lambda'
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import type { IBucket } from 'aws-cdk-lib/aws-s3'
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler'
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager'
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs'
import { Construct } from 'constructs'
import { DEFAULT_SERVICE_NAME } from '../../functions/export/index.ts'
import type { DeploymentConfig } from '../deployment-config.ts'
import { acknowledgeFinding, acknowledgeWildcardResource } from '../nag.ts'
import { type FunctionNetwork, functionNetwork } from './exporter-network.ts'
import { pseudonymizationKeySecret, tokenSecret } from './exporter-secrets.ts'
import * as settings from './exporter-settings.ts'
import { validateExporterProps } from './exporter-validation.ts'
import { memorySizes, reservedConcurrency, type TablePlan } from './table-plan.ts'
import { TableSchedules, type TableSchedulesProps } from './table-schedules.ts'

/** An on-failure destination whose grant is SendMessage alone (see settings.failureQueueStatement). */
const sendOnlyQueue = (queue: Queue): IDestination => ({
  bind: (_scope: Construct, fn: IFunction): DestinationConfig => {
    fn.addToRolePolicy(settings.failureQueueStatement(queue.queueArn))
    return { destination: queue.queueArn }
  },
})

/** The repository root, which holds package-lock.json and functions/. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ExporterProps {
  /**
   * What the function reads at run time: the runtime sections of the parsed configuration (source, tables,
   * export, limits, warehouse), bundled as export-config.json. `export.concurrency` bounds the functions' concurrency
   * together; `warehouse` scopes their rights; `source.caCertificatesFile` is bundled when set.
   */
  readonly runtime: settings.RuntimeSections
  /** Each table's schedule and memory size (`tablePlans`), in configuration order: one schedule each. */
  readonly tables: readonly TablePlan[]
  /** The functions' settings (`deployment.lambda`); `memoryMb` is the default function's. */
  readonly lambda: DeploymentConfig['lambda']
  /** Scheduler's flexible window for every schedule (`deployment.schedule.flexibleWindowMinutes`). */
  readonly flexibleWindowMinutes: number
  /** The default schedule's period (`deployment.schedule.periodHours`), for a function no table's schedule runs. */
  readonly defaultPeriodHours: number
  /** The token secret (`deployment.secret`): imported by name or ARN, else created empty as `createdSecretName`. */
  readonly secret: DeploymentConfig['secret']
  /** Name of the secret the stack creates when `secret.nameOrArn` is not set. */
  readonly createdSecretName: string
  /**
   * The pseudonymization key's secret (`deployment.pseudonymizationSecret`), made or imported only when a table of
   * `runtime.tables` pseudonymizes, and created as `createdPseudonymizationSecretName` unless it names one.
   * @default none: no table pseudonymizes
   */
  readonly pseudonymizationSecret?: DeploymentConfig['pseudonymizationSecret'] | undefined
  /**
   * History operations on AWS (`deployment.historyOperations.enabled`): the pseudonymization key's secret is made
   * or imported whether or not a table pseudonymizes (a request's digests are made with it), and the function may
   * delete the raw bodies of the tables that archive them. @default false
   */
  readonly historyOperations?: boolean
  /**
   * The function the history operations' state machine invokes (`deployment.historyOperations.memoryMb` and
   * `.maxConcurrency`): the same bundle and role with a memory and a reserved concurrency of its own, so a request's
   * batches neither wait for the schedules' slots nor take them. @default none
   */
  readonly historyFunction?: { readonly memoryMb: number; readonly reservedConcurrency: number } | undefined
  /** @default `<createdSecretName>-pseudonymization-key` */
  readonly createdPseudonymizationSecretName?: string | undefined
  /** The subnets and security groups the functions run in (`deployment.vpc`). @default no VPC */
  readonly vpc?: DeploymentConfig['vpc']
  /** The warehouse bucket; the function may only touch `<prefix>/*` in it. */
  readonly bucket: IBucket
  /** The bucket's customer managed key (`deployment.bucket.kmsKeyArn`). @default none: S3 managed keys */
  readonly bucketKeyArn?: string | undefined
  /** POWERTOOLS_SERVICE_NAME, the `service` dimension of every metric. @default 'inventory-export' */
  readonly serviceName?: string
  /** Root of the npm project; relative `source.caCertificatesFile` paths resolve against it. @default the repository root */
  readonly projectRoot?: string
  /** @default `<projectRoot>/functions/export/lambda/handler.ts` */
  readonly entry?: string
  /** @default `<projectRoot>/package-lock.json` */
  readonly depsLockFilePath?: string
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays
  /** Scheduler retries when the invocation itself cannot be delivered (0 to 185). @default 3 */
  readonly scheduleRetryAttempts?: number
  /** How long Scheduler keeps trying to deliver one invocation (1 minute to 24 hours). @default 1 hour */
  readonly scheduleMaxEventAge?: Duration
}

/** The CA bundle to copy into the function: `source.caCertificatesFile`, resolved against the project root. */
export const caCertificatesPath = (runtime: settings.RuntimeSections, projectRoot: string): string | undefined =>
  runtime.source.caCertificatesFile && resolve(projectRoot, runtime.source.caCertificatesFile)

/** Lambda keeps an asynchronous event at most 6 hours. */
export const MAX_ASYNC_EVENT_AGE_SECONDS = 6 * 3600

/**
 * How long a throttled invocation may wait in Lambda's asynchronous queue: one period of the most frequent
 * schedule the function serves (a later run of that table supersedes it), at least a minute, at most 6 hours.
 */
export const asyncEventAgeSeconds = (periodsHours: readonly number[]): number =>
  Math.min(Math.max(Math.round(Math.min(...periodsHours) * 3600), 60), MAX_ASYNC_EVENT_AGE_SECONDS)

/** The functions and everything around the per-table scheduled runs. */
export class Exporter extends Construct {
  /** The function of `deployment.lambda.memoryMb`: tables without their own memoryMb, and manual runs. */
  readonly function: NodejsFunction
  /** Every function by memory size (MB), the default one included; same bundle, same role. */
  readonly functions: ReadonlyMap<number, NodejsFunction>
  /** The function of history operations (`historyFunction`), when there are any. */
  readonly historyFunction: NodejsFunction | undefined
  readonly role: Role
  readonly logGroup: LogGroup
  readonly secret: ISecret
  /** The pseudonymization key's secret; absent when no table pseudonymizes. */
  readonly pseudonymizationSecret: ISecret | undefined
  /** True when the stack created the (empty) secret. */
  readonly secretCreated: boolean
  /** The group of every table's schedule (the schedules are in the nested stacks of tables: `addSchedules`). */
  readonly scheduleGroup: ScheduleGroup
  /** The role Scheduler assumes: invoke these functions, write to the dead-letter queue. */
  readonly scheduleRole: Role
  /** Invocations Scheduler could not deliver. */
  readonly scheduleDeadLetterQueue: Queue
  /** Asynchronous invocations that failed (Lambda on-failure destination). */
  readonly failureQueue: Queue
  readonly serviceName: string
  /** What the function reads at run time, shipped in the bundle as export-config.json. */
  readonly runtimeConfig: ReturnType<typeof settings.runtimeConfig>
  private readonly scheduleOptions: Omit<TableSchedulesProps, 'tables'>

  constructor(scope: Construct, id: string, props: ExporterProps) {
    super(scope, id)
    const projectRoot = props.projectRoot ?? PROJECT_ROOT
    const { runtime, vpc } = props
    const caPath = caCertificatesPath(runtime, projectRoot)
    const bundledCa =
      caPath === undefined ? undefined : `${settings.LAMBDA_TASK_ROOT}/${settings.BUNDLED_CA_CERTIFICATES}`
    const scheduleMaxEventAge = props.scheduleMaxEventAge ?? Duration.hours(1)
    const scheduleRetryAttempts = props.scheduleRetryAttempts ?? 3
    validateExporterProps({ scheduleMaxEventAge, scheduleRetryAttempts })
    this.serviceName = props.serviceName ?? DEFAULT_SERVICE_NAME
    this.runtimeConfig = settings.runtimeConfig(runtime, bundledCa)

    this.secret = tokenSecret(this, props.secret, props.createdSecretName)
    this.secretCreated = settings.secretReference(props.secret.nameOrArn).kind === 'create'
    const needsKey = props.historyOperations === true || runtime.tables.some((t) => t.columns.pseudonymize.length > 0)
    this.pseudonymizationSecret = needsKey
      ? pseudonymizationKeySecret(
          this,
          props.pseudonymizationSecret?.nameOrArn,
          props.createdPseudonymizationSecretName ?? `${props.createdSecretName}-pseudonymization-key`,
        )
      : undefined
    this.failureQueue = this.queue(
      'FailureQueue',
      'it is the on-failure destination of the function: failed invocations end here',
    )
    this.scheduleDeadLetterQueue = this.queue('ScheduleDeadLetterQueue', 'it is the dead-letter queue of the schedule')
    this.logGroup = new LogGroup(this, 'LogGroup', { retention: props.logRetention ?? RetentionDays.THREE_MONTHS })
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Inventory exporter: token secret, warehouse prefix, Glue database, own log group',
    })
    const network = vpc === undefined ? undefined : functionNetwork(this, vpc)

    const plans = props.tables
    const sizes = memorySizes(props.lambda.memoryMb, plans)
    const reserved = reservedConcurrency(sizes, runtime.export.concurrency)
    // Into the cloud assembly's folder (cdk.out), beside the templates it belongs to.
    const runtimeConfigFile = settings.writeRuntimeConfigFile(
      Stage.of(this)?.outdir ?? tmpdir(),
      JSON.stringify(this.runtimeConfig),
    )
    const functions = new Map<number, NodejsFunction>()
    for (const memoryMb of sizes) {
      const periods = plans.filter((plan) => plan.memoryMb === memoryMb).map((plan) => plan.periodHours)
      const id = functions.size === 0 ? 'Function' : `Function${memoryMb}MB`
      const fn = this.exportFunction(id, {
        projectRoot,
        props,
        memoryMb,
        reservedConcurrency: reserved.get(memoryMb) ?? 1,
        maxEventAgeSeconds: asyncEventAgeSeconds(periods.length > 0 ? periods : [props.defaultPeriodHours]),
        bundledCa,
        runtimeConfigFile,
        caPath,
        network,
      })
      functions.set(memoryMb, fn)
    }
    this.functions = functions
    this.function = functions.get(props.lambda.memoryMb)!
    const history = props.historyFunction
    this.historyFunction =
      history &&
      this.exportFunction('HistoryFunction', {
        projectRoot,
        props,
        ...history,
        // Invoked synchronously by the state machine, which retries it: no asynchronous queue to keep events in.
        maxEventAgeSeconds: 60,
        description: `Erasure requests and rewrites of the inventory export, one batch of dates per invocation (${history.memoryMb} MB)`,
        bundledCa,
        runtimeConfigFile,
        caPath,
        network,
      })

    this.grantRuntimeAccess(props, network !== undefined)
    this.scheduleRole = new Role(this, 'ScheduleRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'Inventory export schedule: invoke the exporter, send undeliverable runs to the dead-letter queue',
    })
    // Under "Schedules", where it has always been, so its logical id (and generated name) stays.
    this.scheduleGroup = new ScheduleGroup(new Construct(this, 'Schedules'), 'Group')
    this.scheduleOptions = {
      group: this.scheduleGroup,
      functionFor: (memoryMb) => functions.get(memoryMb) ?? this.function,
      role: this.scheduleRole,
      deadLetterQueue: this.scheduleDeadLetterQueue,
      flexibleWindowMinutes: props.flexibleWindowMinutes,
      retryAttempts: scheduleRetryAttempts,
      maxEventAge: scheduleMaxEventAge,
    }
    for (const fn of functions.values()) {
      acknowledgeWildcardResource(
        this.scheduleRole,
        `${fn.functionArn}:*`,
        'Scheduler may invoke only the export functions; the ":*" suffix matches their versions and aliases, nothing else.',
      )
    }
  }

  /** One schedule for each of `tables`, created in `scope` (a nested stack of tables), all in `scheduleGroup`. */
  addSchedules(scope: Construct, tables: readonly TablePlan[]): TableSchedules {
    return new TableSchedules(scope, 'Schedules', { ...this.scheduleOptions, tables })
  }

  private exportFunction(
    id: string,
    spec: {
      projectRoot: string
      props: ExporterProps
      memoryMb: number
      reservedConcurrency: number
      maxEventAgeSeconds: number
      bundledCa: string | undefined
      runtimeConfigFile: string
      caPath: string | undefined
      network: FunctionNetwork | undefined
      /** @default the export function's */
      description?: string
    },
  ): NodejsFunction {
    const { projectRoot, props } = spec
    const { lambda } = props
    return new NodejsFunction(this, id, {
      description:
        spec.description ??
        `Exports saved tables of the inventory service to S3 as Parquet for Athena (${spec.memoryMb} MB)`,
      entry: props.entry ?? join(projectRoot, 'functions/export/lambda/handler.ts'),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: props.depsLockFilePath ?? join(projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(lambda.timeoutSeconds),
      ephemeralStorageSize: Size.mebibytes(lambda.ephemeralStorageMb),
      role: this.role,
      logGroup: this.logGroup,
      // Bounds what the service sees: the functions' reserved concurrency sums to export.concurrency, and
      // Lambda's asynchronous queue holds the invocations that are throttled until a slot frees.
      reservedConcurrentExecutions: spec.reservedConcurrency,
      // A failed invocation is not retried whole: requests are retried inside it, the table by its next run.
      retryAttempts: 0,
      maxEventAge: Duration.seconds(spec.maxEventAgeSeconds),
      onFailure: sendOnlyQueue(this.failureQueue),
      environment: settings.functionEnvironment({
        bucketName: props.bucket.bucketName,
        secretArn: this.secret.secretArn,
        pseudonymizationSecretArn: this.pseudonymizationSecret?.secretArn,
        serviceName: this.serviceName,
        bundledCaCertificates: spec.bundledCa,
        sourceMaps: lambda.sourceMaps,
      }),
      bundling: settings.bundlingOptions({
        runtimeConfigFile: spec.runtimeConfigFile,
        caCertificatesPath: spec.caPath,
        sourceMaps: lambda.sourceMaps,
      }),
      ...spec.network,
    })
  }

  private queue(id: string, why: string): Queue {
    const queue = new Queue(this, id, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    })
    acknowledgeFinding(queue, 'AwsSolutions-SQS3', `This queue needs no dead-letter queue of its own: ${why}.`)
    return queue
  }

  private grantRuntimeAccess(props: ExporterProps, inVpc: boolean): void {
    const { bucket } = props
    const { prefix, glueDatabase } = props.runtime.warehouse
    // secretFullArn is unknown for a secret imported by name or partial ARN: its policy ARN then ends in -??????.
    this.role.addToPolicy(settings.tokenSecretStatement(this.secret.secretFullArn ?? `${this.secret.secretArn}-??????`))
    if (this.pseudonymizationSecret) this.role.addToPolicy(settings.keySecretStatement(this.pseudonymizationSecret))
    this.logGroup.grantWrite(this.role)
    for (const statement of settings.warehouseStatements(bucket.bucketArn, prefix)) this.role.addToPolicy(statement)
    const { tables } = props.runtime
    this.grant(
      settings.warehouseDeleteStatements(bucket.bucketArn, prefix, tables),
      "Retention removes a table's export dates: the wildcard stops at the table's dated objects (data, dates relation, raw bodies).",
    )
    this.grant(
      settings.icebergFileDeleteStatements(bucket.bucketArn, prefix, tables),
      "An Iceberg table's commits and snapshot expiry remove its own files: the wildcard stops at its data and metadata folders.",
    )
    if (props.historyOperations === true) {
      this.grant(
        settings.versionPurgeStatements(bucket.bucketArn, prefix, tables),
        "An erasure deletes the earlier versions of a date's data and raw bodies: the wildcard stops at the table's dated objects.",
      )
      this.grant(
        settings.rawBodyDeleteStatements(bucket.bucketArn, prefix, tables),
        "An erasure request deletes a date's raw bodies before it rewrites the date: the wildcard stops at the table's raw bodies.",
      )
    }
    const keys = { secretKeyArn: props.secret.kmsKeyArn, bucketKeyArn: props.bucketKeyArn }
    for (const statement of settings.kmsStatements(keys)) this.role.addToPolicy(statement)
    for (const statement of settings.glueStatements(Stack.of(this), glueDatabase)) this.role.addToPolicy(statement)
    acknowledgeWildcardResource(
      this.role,
      `${bucket.bucketArn}/${prefix}/*`,
      `Objects are written per table and date under the configured prefix "${prefix}/"; the wildcard stops at that prefix.`,
    )
    acknowledgeWildcardResource(
      this.role,
      Stack.of(this).formatArn({ service: 'glue', resource: 'table', resourceName: `${glueDatabase}/*` }),
      `Tables are created as saved tables are configured; the wildcard covers the tables of database "${glueDatabase}" only.`,
    )
    if (inVpc) {
      this.role.addToPolicy(settings.vpcNetworkInterfaceStatement())
      acknowledgeFinding(
        this.role,
        'AwsSolutions-IAM5[Resource::*]',
        'Lambda creates and deletes the network interfaces of the configured subnets; ec2:Describe* supports no resource scoping.',
      )
    }
  }

  /** Adds the statements to the role, acknowledging each wildcard resource they allow with `why`. */
  private grant(statements: readonly PolicyStatement[], why: string): void {
    for (const statement of statements) {
      this.role.addToPolicy(statement)
      if (statement.effect !== Effect.ALLOW) continue
      for (const resource of statement.resources.filter((r) => r.includes('*'))) {
        acknowledgeWildcardResource(this.role, resource, why)
      }
    }
  }
}
