/**
 * CloudFormation's limits on the names and texts the stack builds from the configuration, so `cdk synth` refuses
 * a configuration whose resources AWS would reject with CONFIG_INVALID naming the field, not with a deploy-time
 * failure. The numbers are the registry schemas' (test/aws/schemas); a test keeps the two in step.
 */
import { type ConfigProblem, stackResourceNames } from '../../functions/export/index.ts'
import type { DeployConfig } from '../deployment-config.ts'
import { tableStaleDescription } from './alarm-texts.ts'
import { latestRecordHint, staleAlarmName } from './alarms.ts'
import { changesQuery, tableQueries } from './analyst-queries.ts'
import { tablePlans } from './table-plan.ts'
import { scheduleDescription } from './table-schedules.ts'

/** maxLength of each property, by resource type, as the registry schemas state them. */
export const RESOURCE_LIMITS = {
  'AWS::Athena::NamedQuery': { Name: 128, Description: 1024 },
  'AWS::CloudWatch::Alarm': { AlarmName: 255, AlarmDescription: 1024 },
  'AWS::Scheduler::Schedule': { Description: 512, ScheduleExpression: 256, ScheduleExpressionTimezone: 50 },
} as const

type Limited = {
  [T in keyof typeof RESOURCE_LIMITS]: `${T}.${keyof (typeof RESOURCE_LIMITS)[T] & string}`
}[keyof typeof RESOURCE_LIMITS]

const limitOf = (property: Limited): number => {
  const [type, name] = property.split(/\.(?=[^.]+$)/) as [keyof typeof RESOURCE_LIMITS, string]
  return (RESOURCE_LIMITS[type] as Readonly<Record<string, number>>)[name]!
}

/** Every name or text of the stack's resources that would exceed CloudFormation's limit, naming the field behind it. */
export const resourceLimitProblems = (config: DeployConfig): ConfigProblem[] => {
  const problems: ConfigProblem[] = []
  const check = (field: string, property: Limited, what: string, value: string, remedy: string) => {
    const limit = limitOf(property)
    if (value.length > limit) {
      problems.push({
        field,
        message: `makes ${what} ${value.length} characters long, over the ${limit} of ${property}; ${remedy}`,
      })
    }
  }
  const { deployment } = config
  const prefix = stackResourceNames(deployment.stackName).alarmPrefix
  const plans = tablePlans(config)
  config.tables.forEach((table, index) => {
    const field = `tables[${index}].name`
    const shorter = 'choose a shorter table name'
    if (deployment.athena.tableQueries) {
      const queries = [
        ...tableQueries(table.name),
        ...(table.key ? [changesQuery({ name: table.name, key: table.key })] : []),
      ]
      for (const query of queries) {
        check(
          field,
          'AWS::Athena::NamedQuery.Name',
          `the named query "${query.name}"`,
          query.name,
          `${shorter} or set deployment.athena.tableQueries to false`,
        )
        check(
          field,
          'AWS::Athena::NamedQuery.Description',
          `the description of "${query.name}"`,
          query.description,
          shorter,
        )
      }
    }
    const plan = plans[index]!
    check(
      field,
      'AWS::CloudWatch::Alarm.AlarmName',
      'its staleness alarm name',
      staleAlarmName(prefix, table.name),
      `${shorter} or a shorter deployment.stackName`,
    )
    const description = tableStaleDescription({
      table: table.name,
      tableId: table.id,
      expression: plan.expression,
      periodHours: plan.periodHours,
      staleAfterPeriods: deployment.alarms.staleAfterPeriods,
      latestRecord: latestRecordHint(config.warehouse.prefix, table.name),
    })
    const fromTable = `${shorter}, schedule expression or warehouse.prefix`
    check(field, 'AWS::CloudWatch::Alarm.AlarmDescription', 'its staleness alarm description', description, fromTable)
    const scheduleField = table.schedule ? `tables[${index}].schedule.expression` : 'deployment.schedule.expression'
    check(
      scheduleField,
      'AWS::Scheduler::Schedule.ScheduleExpression',
      `the schedule of ${table.name}`,
      plan.expression,
      'shorten the expression',
    )
    check(
      field,
      'AWS::Scheduler::Schedule.Description',
      `the description of its schedule`,
      scheduleDescription(plan),
      `${shorter} or schedule expression`,
    )
  })
  return problems
}
