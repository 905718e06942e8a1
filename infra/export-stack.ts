/** The deployable stack: warehouse, exporter, alarms and dashboard, all shaped by one parsed configuration. */
import { CfnOutput, CfnResource, RemovalPolicies, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib'
import type { ManagedPolicy } from 'aws-cdk-lib/aws-iam'
import type { Construct } from 'constructs'
import { ConfigError, DEFAULT_SERVICE_NAME, stackResourceNames } from '../functions/export/index.ts'
import { alarmPeriodSeconds } from './constructs/alarm-windows.ts'
import { ExportAlarms } from './constructs/alarms.ts'
import { analystPolicy } from './constructs/analyst-policy.ts'
import { namedQueries } from './constructs/analyst-queries.ts'
import { ExportDashboard } from './constructs/dashboard.ts'
import { caCertificatesPath, Exporter, PROJECT_ROOT } from './constructs/exporter.ts'
import { validateDeployment } from './constructs/exporter-validation.ts'
import { GuardHeldAlarm } from './constructs/guard-alarm.ts'
import { HistoryOperations } from './constructs/history-operations.ts'
import { tablePlans } from './constructs/table-plan.ts'
import { TableStack, tableStackId, tablesByStack } from './constructs/table-stacks.ts'
import { ATHENA_RESULTS_PREFIX, Warehouse } from './constructs/warehouse.ts'
import type { DeployConfig } from './deployment-config.ts'

export { DEFAULT_STACK_NAME } from '../functions/export/index.ts'

export interface ExportStackProps extends StackProps {
  /** The parsed, validated configuration (parseDeployConfig). */
  readonly config: DeployConfig
  /** POWERTOOLS_SERVICE_NAME and the `service` metric dimension. @default 'inventory-export' */
  readonly serviceName?: string
  /** Root of the npm project (lock file, functions/, relative CA path). @default the repository root */
  readonly projectRoot?: string
  /**
   * Delete everything with the stack: the buckets are emptied (autoDeleteObjects) and every resource's removal
   * policy is DESTROY. Only for the integration test's stack (integ/), never for a deployment. @default false
   */
  readonly disposable?: boolean
}

export class ExportStack extends Stack {
  readonly warehouse: Warehouse
  readonly exporter: Exporter
  readonly alarms: ExportAlarms
  /** The nested stacks holding each table's schedule, staleness alarm and named queries (table-stacks.ts). */
  readonly tableStacks: readonly TableStack[]
  /** Pages on the first table an upstream change guard held. */
  readonly guardHeld: GuardHeldAlarm
  readonly dashboard: ExportDashboard
  /** Attach to analysts' roles: query the workgroup, read the catalog and data, write results. */
  readonly analystPolicy: ManagedPolicy
  /** The state machine of erasure requests (`deployment.historyOperations.enabled`). */
  readonly historyOperations: HistoryOperations | undefined

  constructor(scope: Construct, id: string, props: ExportStackProps) {
    super(scope, id, {
      description:
        'Inventory export: a scheduled Lambda lands saved tables of the inventory service in S3 as Parquet for Athena',
      ...props,
    })
    const { config } = props
    const { deployment } = config

    this.warehouse = new Warehouse(this, 'Warehouse', {
      prefix: config.warehouse.prefix,
      glueDatabaseName: config.warehouse.glueDatabase,
      workgroupName: deployment.athena.workgroup,
      bytesScannedCutoffPerQuery: deployment.athena.bytesScannedCutoffPerQuery,
      athenaResultsExpirationDays: deployment.athena.resultsExpirationDays,
      ...(props.disposable === true ? { removalPolicy: RemovalPolicy.DESTROY, autoDeleteObjects: true } : {}),
      ...(deployment.bucket.name === undefined ? {} : { existingBucketName: deployment.bucket.name }),
      namedQueries: namedQueries([], deployment.athena.namedQueries),
    })

    validateDeployment(config, caCertificatesPath(config, props.projectRoot ?? PROJECT_ROOT))
    const { source, tables, export: tuning, limits, warehouse } = config
    this.exporter = new Exporter(this, 'Exporter', {
      runtime: { source, tables, export: tuning, limits, warehouse },
      tables: tablePlans(config),
      lambda: deployment.lambda,
      flexibleWindowMinutes: deployment.schedule.flexibleWindowMinutes,
      defaultPeriodHours: deployment.schedule.periodHours,
      secret: deployment.secret,
      createdSecretName: stackResourceNames(deployment.stackName).tokenSecret,
      pseudonymizationSecret: deployment.pseudonymizationSecret,
      createdPseudonymizationSecretName: stackResourceNames(deployment.stackName).pseudonymizationSecret,
      historyOperations: deployment.historyOperations.enabled,
      ...(deployment.historyOperations.enabled
        ? {
            historyFunction: {
              memoryMb: deployment.historyOperations.memoryMb,
              reservedConcurrency: deployment.historyOperations.maxConcurrency,
            },
          }
        : {}),
      ...(deployment.vpc === undefined ? {} : { vpc: deployment.vpc }),
      bucket: this.warehouse.bucket,
      bucketKeyArn: deployment.bucket.kmsKeyArn,
      serviceName: props.serviceName ?? DEFAULT_SERVICE_NAME,
      ...(props.projectRoot === undefined ? {} : { projectRoot: props.projectRoot }),
    })

    this.alarms = new ExportAlarms(this, 'Alarms', {
      serviceName: this.exporter.serviceName,
      functions: [...this.exporter.functions.values()],
      tables: tablePlans(config),
      warehousePrefix: config.warehouse.prefix,
      scheduleDeadLetterQueue: this.exporter.scheduleDeadLetterQueue,
      schedulePeriodHours: deployment.schedule.periodHours,
      thresholds: deployment.alarms,
    })

    const keys = new Map(config.tables.map((table) => [table.name, table.key]))
    this.tableStacks = [...tablesByStack(tablePlans(config))].map(
      ([n, plans]) =>
        new TableStack(this, tableStackId(n), {
          tables: plans,
          queries: deployment.athena.tableQueries
            ? namedQueries(
                plans.map((plan) => plan.name),
                [],
                plans.flatMap(({ name }) => {
                  const key = keys.get(name)
                  return key ? [{ name, key }] : []
                }),
              )
            : [],
          addSchedules: (scope, tables) => this.exporter.addSchedules(scope, tables),
          addStaleTableAlarms: (scope, tables) => this.alarms.addStaleTableAlarms(scope, tables),
          addNamedQueries: (scope, queries) => this.warehouse.addNamedQueries(scope, queries),
        }),
    )

    this.guardHeld = new GuardHeldAlarm(this, 'GuardHeld', {
      serviceName: this.exporter.serviceName,
      topic: this.alarms.topic,
      schedulePeriodHours: deployment.schedule.periodHours,
    })

    this.dashboard = new ExportDashboard(this, 'Dashboard', {
      serviceName: this.exporter.serviceName,
      tableNames: config.tables.map((table) => table.name),
      timeoutSeconds: deployment.lambda.timeoutSeconds,
      periodSeconds: alarmPeriodSeconds(deployment.schedule.periodHours),
      alarms: [...this.alarms.alarms, this.guardHeld.alarm],
      dashboardName: this.stackName,
    })

    this.analystPolicy = analystPolicy(this, 'AnalystPolicy', this.warehouse.bucket, {
      prefix: config.warehouse.prefix,
      resultsPrefix: ATHENA_RESULTS_PREFIX,
      workgroupName: this.warehouse.workgroupName,
      glueDatabase: this.warehouse.databaseName,
      bucketKeyArn: deployment.bucket.kmsKeyArn,
    })

    this.historyOperations = deployment.historyOperations.enabled
      ? new HistoryOperations(this, 'HistoryOperations', {
          function: this.exporter.historyFunction!,
          maxConcurrency: deployment.historyOperations.maxConcurrency,
          distributedFromDates: deployment.historyOperations.distributedFromDates,
        })
      : undefined

    // What the deploy guide refers to: where to put the token, what to invoke, where to look.
    const outputs: Record<string, string> = {
      TokenSecretArn: this.exporter.secret.secretArn,
      ...(this.exporter.pseudonymizationSecret
        ? { PseudonymizationSecretArn: this.exporter.pseudonymizationSecret.secretArn }
        : {}),
      ExportFunctionName: this.exporter.function.functionName,
      WarehouseBucketName: this.warehouse.bucket.bucketName,
      GlueDatabaseName: this.warehouse.databaseName,
      AthenaWorkgroupName: this.warehouse.workgroupName,
      AlarmTopicArn: this.alarms.topic.topicArn,
      FailureQueueUrl: this.exporter.failureQueue.queueUrl,
      AnalystPolicyArn: this.analystPolicy.managedPolicyArn,
      ScheduleGroupName: this.exporter.scheduleGroup.scheduleGroupName,
      // What `npm run verify` needs besides the above: where run records live, which tables to try.
      WarehousePrefix: config.warehouse.prefix,
      ExportedTables: config.tables.map((table) => table.name).join(','),
      ...(this.historyOperations
        ? { HistoryStateMachineArn: this.historyOperations.stateMachine.stateMachineArn }
        : {}),
    }
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value })
    // After everything is added, so the log group and the created secret are covered as well.
    if (props.disposable === true) RemovalPolicies.of(this).destroy()
    checkResourceCount(this, config)
  }
}

/** CloudFormation's quota of resources in one stack. */
export const MAX_STACK_RESOURCES = 500

/** The resources of `stack` itself, not of its nested stacks (each nested stack is one resource of its parent). */
export const stackResourceCount = (stack: Stack): number =>
  stack.node.findAll().filter((construct) => construct instanceof CfnResource && Stack.of(construct) === stack).length

/**
 * The tables' resources are spread over nested stacks by a hash of their names; should one of them (or the stack
 * itself) pass CloudFormation's quota, say so at synth, naming what to change, instead of failing at deploy.
 */
const checkResourceCount = (stack: ExportStack, config: DeployConfig): void => {
  const full = [stack, ...stack.tableStacks]
    .map((s) => ({ s, count: stackResourceCount(s) }))
    .filter(({ count }) => count > MAX_STACK_RESOURCES)
  if (full.length === 0) return
  const queries = config.deployment.athena.tableQueries
  throw new ConfigError(
    'stack settings',
    full.map(({ s, count }) => ({
      field: queries ? 'deployment.athena.tableQueries' : 'tables',
      message: `${config.tables.length} tables make ${count} resources in ${s.node.path}, more than the ${MAX_STACK_RESOURCES} CloudFormation allows in one stack; ${queries ? 'set it to false (3 named queries per table) or ' : ''}split the tables over two stacks (deployment.stackName)`,
    })),
  )
}
