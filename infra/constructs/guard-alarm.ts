/**
 * The page for a held table: an upstream change guard kept a snapshot that shrank or lost columns from being
 * published. It reads the run-level `GuardHeld` (tables held per run), so one alarm covers every table however
 * many there are; the per-table `GuardHeld` on the dashboard and the log line name the table.
 */
import { Stack } from 'aws-cdk-lib'
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import type { ITopic } from 'aws-cdk-lib/aws-sns'
import { Construct } from 'constructs'
import { MetricName } from '../../functions/export/index.ts'
import { DEFAULT_RUNBOOK } from './alarm-texts.ts'
import { singlePeriodWindow } from './alarm-windows.ts'
import { exportMetric } from './telemetry.ts'

export interface GuardHeldAlarmProps {
  /** The `service` dimension of the metrics (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string
  /** The alarm topic; notified on ALARM and on OK. */
  readonly topic: ITopic
  /** Length of one schedule period (deployment.schedule.periodHours). */
  readonly schedulePeriodHours: number
  /** @default DEFAULT_RUNBOOK */
  readonly runbook?: string
  /** Prefix of the alarm name. @default the stack name */
  readonly alarmNamePrefix?: string
}

export const guardHeldDescription = (runbook: string = DEFAULT_RUNBOOK): string =>
  [
    'An upstream change guard held a table in the last schedule period: its export shrank below export.guards.holdBelow of the previous published one,',
    'came back empty, or lost (or gained) a column set to hold. Nothing of it was published; the previous data and the latest view are unchanged.',
    'Do: find the table and its figures in the log line "table export failed" (field guards) or the run record under <prefix>/_runs/ (tables[].guards);',
    "check the saved table in the service's UI: its filters and columns, and which assets the token's user may see.",
    'If the change is real, accept it: invoke the function with {"tables":["<name>"],"acceptChanges":true}; otherwise fix the saved table or the permissions and wait for the next run.',
    `Runbook: ${runbook}.`,
  ].join(' ')

export class GuardHeldAlarm extends Construct {
  readonly alarm: Alarm

  constructor(scope: Construct, id: string, props: GuardHeldAlarmProps) {
    super(scope, id)
    const window = singlePeriodWindow(props.schedulePeriodHours)
    const prefix = props.alarmNamePrefix ?? Stack.of(this).stackName
    this.alarm = new Alarm(this, 'Alarm', {
      alarmName: `${prefix}-guard-held`,
      alarmDescription: guardHeldDescription(props.runbook),
      metric: exportMetric(props.serviceName, MetricName.GUARD_HELD, {
        statistic: 'Maximum',
        periodSeconds: window.periodSeconds,
        label: 'Tables held by an upstream change guard',
      }),
      // The first hold pages: one data point of one period.
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: window.evaluationPeriods,
      datapointsToAlarm: window.datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    })
    const action = new SnsAction(props.topic)
    this.alarm.addAlarmAction(action)
    this.alarm.addOkAction(action)
  }
}
