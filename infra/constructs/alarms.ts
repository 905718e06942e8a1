/**
 * The pages: an encrypted SNS topic, three alarms on the exporter as a whole and one staleness alarm per table.
 * Each alarm's period and window come from a schedule (alarm-windows.ts), so "2 of the last 3 runs" means
 * schedule periods, not single invocations, and a table's staleness counts in that table's own periods.
 */
import { Duration, Stack } from 'aws-cdk-lib'
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Key } from 'aws-cdk-lib/aws-kms'
import type { IFunction } from 'aws-cdk-lib/aws-lambda'
import { Topic } from 'aws-cdk-lib/aws-sns'
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions'
import type { IQueue } from 'aws-cdk-lib/aws-sqs'
import { Construct } from 'constructs'
import { ConfigError, LATEST_OUTCOMES_FOLDER, MetricDimension, MetricName } from '../../functions/export/index.ts'
import type { DeploymentConfig } from '../deployment-config.ts'
import { alarmDescriptions, tableStaleDescription } from './alarm-texts.ts'
import * as windows from './alarm-windows.ts'
import type { TablePlan } from './table-plan.ts'
import { exportMetric } from './telemetry.ts'

/** How often the dead-letter queue depth is looked at. */
export const QUEUE_ALARM_PERIOD_SECONDS = 300

/**
 * The key policy statement AWS documents for CloudWatch alarms publishing to an SNS topic encrypted with a customer
 * managed key (CloudWatch User Guide, "Using Amazon SNS topics with alarms"; SNS "Configure AWS KMS permissions for
 * AWS services"): kms:Decrypt and kms:GenerateDataKey* for cloudwatch.amazonaws.com, with no condition. A condition
 * the service's request does not carry would drop every notification silently; the confused-deputy guard is the
 * topic policy's aws:SourceAccount on sns:Publish, which no other account's alarm passes.
 */
export const alarmTopicKeyStatement = (): PolicyStatement =>
  new PolicyStatement({
    sid: 'CloudWatchAlarmsPublishToTopic',
    principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
    resources: ['*'],
  })

export interface ExportAlarmsProps {
  /** The `service` dimension of the metrics (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string
  /** The export functions (one per memory size). */
  readonly functions: readonly IFunction[]
  /** The tables, each with its schedule period: each one's staleness window is checked here (`addStaleTableAlarms`). */
  readonly tables: readonly TablePlan[]
  /** The warehouse prefix, for the alarm texts (warehouse.prefix). @default 'inventory' */
  readonly warehousePrefix?: string
  /** Invocations the schedule could not deliver. */
  readonly scheduleDeadLetterQueue: IQueue
  /** Length of one period of the default schedule (deployment.schedule.periodHours): the failure alarms count in these. */
  readonly schedulePeriodHours: number
  /** Thresholds and e-mail addresses (config deployment.alarms). */
  readonly thresholds: DeploymentConfig['alarms']
  /** Where the runbook is. @default 'docs/operations.md, section "When an alarm fires"' */
  readonly runbook?: string
  /** Prefix of the alarm names. @default the stack name */
  readonly alarmNamePrefix?: string
}

const validate = (props: ExportAlarmsProps): void => {
  const { schedulePeriodHours: hours, thresholds: t } = props
  const checks: [string, windows.AlarmWindow][] = [
    ['deployment.alarms.evaluationRuns', windows.failedRunsWindow(hours, t.failedRunsToAlarm, t.evaluationRuns)],
    ...props.tables.map((table): [string, windows.AlarmWindow] => [
      `deployment.alarms.staleAfterPeriods (table ${table.name})`,
      windows.staleWindow(table.periodHours, t.staleAfterPeriods),
    ]),
  ]
  const problems = checks.flatMap(([field, window]) => {
    const problem = windows.windowProblem(window)
    return problem === undefined
      ? []
      : [{ field, message: `${problem} (with deployment.schedule.periodHours ${hours})` }]
  })
  if (problems.length > 0) throw new ConfigError('alarm settings', problems)
}

/**
 * The name of a table's staleness alarm; resource-limits.ts checks it against CloudWatch's length limit.
 * Named `-table-stale-` since the alarms moved into nested stacks: under the old name
 * `-stale-`, the upgrade's new alarm would overwrite the old one (PutMetricAlarm replaces by name) and the old
 * resource's deletion would then delete it.
 */
export const staleAlarmName = (prefix: string, table: string): string => `${prefix}-table-stale-${table}`

/** Where a table's latest outcome is, as a staleness alarm's description names it. */
export const latestRecordHint = (warehousePrefix: string, table: string): string =>
  `s3://<bucket>/${warehousePrefix}/${LATEST_OUTCOMES_FOLDER}/${table}.json`

/** The alarm topic and the alarms; every alarm notifies the topic on ALARM and on OK. */
export class ExportAlarms extends Construct {
  readonly topic: Topic
  readonly topicKey: Key
  /** (a) 401/403 or 5xx that outlasted the retries, in at least M of the last N runs. */
  readonly persistentSourceFailures: Alarm
  /** (b) the function failed on its own side: a crash, a timeout, a data or configuration failure. */
  readonly functionErrors: Alarm
  /** (b) Scheduler could not invoke the function, or Lambda dropped a run that waited too long for a slot. */
  readonly undeliveredRuns: Alarm
  /**
   * (c) per table, by name: no successful export for `staleAfterPeriods` of the table's schedule periods. Filled by
   * `addStaleTableAlarms`, in the nested stacks of tables.
   */
  readonly staleTables = new Map<string, Alarm>()
  private readonly props: ExportAlarmsProps
  private readonly prefix: string

  constructor(scope: Construct, id: string, props: ExportAlarmsProps) {
    super(scope, id)
    validate(props)
    const { serviceName, schedulePeriodHours: hours, thresholds } = props
    const prefix = props.alarmNamePrefix ?? Stack.of(this).stackName
    const texts = alarmDescriptions({ ...thresholds, schedulePeriodHours: hours, runbook: props.runbook })
    ;({ topic: this.topic, key: this.topicKey } = this.createTopic(thresholds.emails))

    const failed = windows.failedRunsWindow(hours, thresholds.failedRunsToAlarm, thresholds.evaluationRuns)
    const perRun = { statistic: 'Maximum', periodSeconds: failed.periodSeconds } as const
    this.persistentSourceFailures = this.alarm(
      this,
      'PersistentSourceFailures',
      `${prefix}-persistent-source-failures`,
      {
        metric: new MathExpression({
          expression: 'MAX([auth, server])',
          usingMetrics: {
            auth: exportMetric(serviceName, MetricName.RUNS_WITH_AUTH_FAILURES, perRun),
            server: exportMetric(serviceName, MetricName.RUNS_WITH_SERVER_FAILURES, perRun),
          },
          period: Duration.seconds(failed.periodSeconds),
          label: 'Runs with persistent 401/403 or 5xx failures',
        }),
        window: failed,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        threshold: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        description: texts.persistentSourceFailures,
      },
    )

    const single = windows.singlePeriodWindow(hours)
    // Invocations that failed, less the runs that failed only on the service's side: a crash, a timeout, or a
    // table failing on its data or configuration pages at once; upstream trouble is alarm (a)'s to judge.
    const periodSeconds = single.periodSeconds
    const errors = Object.fromEntries(
      props.functions.map((fn, i) => [
        i === 0 ? 'errors' : `errors${i}`,
        fn.metricErrors({ statistic: 'Sum', period: Duration.seconds(periodSeconds) }),
      ]),
    )
    const errorIds = Object.keys(errors)
    this.functionErrors = this.alarm(this, 'FunctionErrors', `${prefix}-function-errors`, {
      metric: new MathExpression({
        expression: `${errorIds.length === 1 ? 'errors' : `SUM([${errorIds.join(', ')}])`} - FILL(bySource, 0)`,
        usingMetrics: {
          ...errors,
          bySource: exportMetric(serviceName, MetricName.RUNS_FAILED_BY_SOURCE, { statistic: 'Sum', periodSeconds }),
        },
        period: Duration.seconds(periodSeconds),
        label: 'Failed invocations not caused by the inventory service',
      }),
      window: single,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      threshold: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description: texts.functionErrors,
    })

    const queuePeriod = Duration.seconds(QUEUE_ALARM_PERIOD_SECONDS)
    const dropped = Object.fromEntries(
      props.functions.map((fn, i) => [
        `dropped${i}`,
        fn.metric('AsyncEventsDropped', { statistic: 'Sum', period: queuePeriod }),
      ]),
    )
    this.undeliveredRuns = this.alarm(this, 'UndeliveredRuns', `${prefix}-undelivered-runs`, {
      metric: new MathExpression({
        expression: `MAX([undelivered, ${Object.keys(dropped).join(', ')}])`,
        usingMetrics: {
          undelivered: props.scheduleDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: queuePeriod,
          }),
          ...dropped,
        },
        period: queuePeriod,
        label: 'Runs not delivered by Scheduler or dropped from the asynchronous queue',
      }),
      window: { periodSeconds: QUEUE_ALARM_PERIOD_SECONDS, evaluationPeriods: 1, datapointsToAlarm: 1 },
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      threshold: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description: texts.undeliveredRuns,
    })

    this.props = props
    this.prefix = prefix
  }

  /** Every alarm, the three exporter-wide ones first, then the staleness alarms added so far. */
  get alarms(): readonly Alarm[] {
    return [this.persistentSourceFailures, this.functionErrors, this.undeliveredRuns, ...this.staleTables.values()]
  }

  /** A staleness alarm for each of `tables`, created in `scope` (a nested stack of tables), paging this topic. */
  addStaleTableAlarms(scope: Construct, tables: readonly TablePlan[]): Alarm[] {
    return tables.map((table) => {
      const alarm = this.staleTableAlarm(scope, table)
      this.staleTables.set(table.name, alarm)
      return alarm
    })
  }

  /** No success of this table in `staleAfterPeriods` of its own periods; silence counts as failure. */
  private staleTableAlarm(scope: Construct, table: TablePlan): Alarm {
    const { props, prefix } = this
    const { staleAfterPeriods } = props.thresholds
    const stale = windows.staleWindow(table.periodHours, staleAfterPeriods)
    const warehousePrefix = props.warehousePrefix ?? 'inventory'
    return this.alarm(scope, `Stale-${table.name}`, staleAlarmName(prefix, table.name), {
      metric: exportMetric(props.serviceName, MetricName.TABLES_SUCCEEDED, {
        statistic: 'Sum',
        periodSeconds: stale.periodSeconds,
        dimensions: { [MetricDimension.TABLE]: table.name },
      }),
      window: stale,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 1,
      treatMissingData: TreatMissingData.BREACHING,
      description: tableStaleDescription({
        table: table.name,
        tableId: table.id,
        expression: table.expression,
        periodHours: table.periodHours,
        staleAfterPeriods,
        latestRecord: latestRecordHint(warehousePrefix, table.name),
        runbook: props.runbook,
      }),
    })
  }

  private createTopic(emails: readonly string[]): { topic: Topic; key: Key } {
    const key = new Key(this, 'TopicKey', {
      enableKeyRotation: true,
      description: 'Encrypts the inventory export alarm topic',
    })
    key.addToResourcePolicy(alarmTopicKeyStatement())
    const topic = new Topic(this, 'Topic', { displayName: 'Inventory export alarms', masterKey: key, enforceSSL: true })
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccount',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    )
    for (const email of new Set(emails.map((e) => e.toLowerCase()))) topic.addSubscription(new EmailSubscription(email))
    return { topic, key }
  }

  private alarm(
    scope: Construct,
    id: string,
    alarmName: string,
    spec: {
      metric: IMetric
      window: windows.AlarmWindow
      comparisonOperator: ComparisonOperator
      threshold: number
      treatMissingData: TreatMissingData
      description: string
    },
  ): Alarm {
    const alarm = new Alarm(scope, id, {
      alarmName,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: spec.comparisonOperator,
      evaluationPeriods: spec.window.evaluationPeriods,
      datapointsToAlarm: spec.window.datapointsToAlarm,
      treatMissingData: spec.treatMissingData,
    })
    const action: IAlarmAction = new SnsAction(this.topic)
    alarm.addAlarmAction(action)
    alarm.addOkAction(action)
    return alarm
  }
}
