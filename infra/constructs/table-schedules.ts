/**
 * One EventBridge Scheduler schedule per table, all in the stack's one schedule group: each invokes the function of the
 * table's memory size with `{"tables": ["<name>"]}`, so every table has its own invocation and 15 minutes.
 */
import { Duration, TimeZone } from 'aws-cdk-lib'
import type { IRole } from 'aws-cdk-lib/aws-iam'
import type { IFunction } from 'aws-cdk-lib/aws-lambda'
import {
  type IScheduleGroup,
  Schedule,
  ScheduleExpression,
  ScheduleTargetInput,
  TimeWindow,
} from 'aws-cdk-lib/aws-scheduler'
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets'
import type { IQueue } from 'aws-cdk-lib/aws-sqs'
import { Construct } from 'constructs'
import type { TablePlan } from './table-plan.ts'

/** A table's schedule description; resource-limits.ts checks it against Scheduler's length limit. */
export const scheduleDescription = (table: TablePlan): string =>
  `Exports table ${table.name} (${table.id}): ${table.expression} ${table.timeZone}`

/** The event a table's schedule sends: the handler exports exactly that table. */
export const scheduleInput = (tableName: string): { tables: [string] } => ({ tables: [tableName] })

export interface TableSchedulesProps {
  readonly tables: readonly TablePlan[]
  /** The one schedule group of the stack, whichever nested stack the schedules are in. */
  readonly group: IScheduleGroup
  /** The function that exports tables of this memory size. */
  readonly functionFor: (memoryMb: number) => IFunction
  /** The role Scheduler assumes for every schedule. */
  readonly role: IRole
  /** Where Scheduler puts an invocation it could not deliver. */
  readonly deadLetterQueue: IQueue
  /** Starts spread at random over this many minutes after the scheduled time; 0 for exactly on time. */
  readonly flexibleWindowMinutes: number
  /** Scheduler's retries when the invocation cannot be delivered (0 to 185). */
  readonly retryAttempts: number
  /** How long Scheduler keeps trying to deliver one invocation. */
  readonly maxEventAge: Duration
}

export class TableSchedules extends Construct {
  /** By table name. */
  readonly schedules: ReadonlyMap<string, Schedule>

  constructor(scope: Construct, id: string, props: TableSchedulesProps) {
    super(scope, id)
    const timeWindow =
      props.flexibleWindowMinutes === 0
        ? TimeWindow.off()
        : TimeWindow.flexible(Duration.minutes(props.flexibleWindowMinutes))
    const schedules = new Map<string, Schedule>()
    for (const table of props.tables) {
      const schedule = new Schedule(this, `Table-${table.name}`, {
        scheduleGroup: props.group,
        description: scheduleDescription(table),
        schedule: ScheduleExpression.expression(table.expression, TimeZone.of(table.timeZone)),
        timeWindow,
        target: new LambdaInvoke(props.functionFor(table.memoryMb), {
          role: props.role,
          input: ScheduleTargetInput.fromObject(scheduleInput(table.name)),
          deadLetterQueue: props.deadLetterQueue,
          retryAttempts: props.retryAttempts,
          maxEventAge: props.maxEventAge,
        }),
      })
      schedules.set(table.name, schedule)
    }
    this.schedules = schedules
  }
}
