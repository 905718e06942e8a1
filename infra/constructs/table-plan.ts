/**
 * What each configured table gets on AWS: its schedule (its own or the default), the period its staleness
 * is counted in, and the memory of the function that runs it. Pure, and every problem is reported at once
 * naming the configuration field, so `cdk synth` fails before CloudFormation would.
 */
import type { ConfigProblem } from '../../functions/export/index.ts'
import type { DeployConfig } from '../deployment-config.ts'
import { scheduleExpressionProblems, scheduleIntervalHours } from '../schedule.ts'

/** The first reason Scheduler would refuse the expression (the config schema reports them all). */
const scheduleExpressionProblem = (expression: string): string | undefined => scheduleExpressionProblems(expression)[0]

/** One table's schedule and resources. */
export interface TablePlan {
  readonly name: string
  readonly id: string
  readonly expression: string
  readonly timeZone: string
  /** Length of this table's schedule period: its alarm counts staleness in these. */
  readonly periodHours: number
  readonly memoryMb: number
}

/** CloudWatch alarms look back at most 7 days (1 day for periods under an hour). */
const lookBackHours = (periodHours: number): number => (periodHours < 1 ? 24 : 168)

/** The plan of every table, in configuration order. */
export const tablePlans = (config: DeployConfig): TablePlan[] => {
  const fallback = config.deployment.schedule
  return config.tables.map((table) => {
    const own = table.schedule
    const expression = own?.expression ?? fallback.expression
    return {
      name: table.name,
      id: table.id,
      expression,
      timeZone: own?.timeZone ?? fallback.timeZone,
      periodHours:
        own === undefined ? fallback.periodHours : (own.periodHours ?? scheduleIntervalHours(expression) ?? Number.NaN),
      memoryMb: table.memoryMb ?? config.deployment.lambda.memoryMb,
    }
  })
}

/** The distinct memory sizes, the default (`deployment.lambda.memoryMb`) first: one function each. */
export const memorySizes = (defaultMemoryMb: number, plans: readonly TablePlan[]): number[] => [
  ...new Set([defaultMemoryMb, ...plans.map((plan) => plan.memoryMb)]),
]

/** Every problem with the tables' schedules and memory, one line each naming the field; empty when none. */
export const tablePlanProblems = (config: DeployConfig): ConfigProblem[] => {
  const problems: ConfigProblem[] = []
  const defaultProblem = scheduleExpressionProblem(config.deployment.schedule.expression)
  if (defaultProblem !== undefined) problems.push({ field: 'deployment.schedule.expression', message: defaultProblem })
  const { staleAfterPeriods } = config.deployment.alarms
  tablePlans(config).forEach((plan, index) => {
    const own = config.tables[index]?.schedule
    if (own === undefined) return
    const field = `tables[${index}].schedule`
    const problem = scheduleExpressionProblem(own.expression)
    if (problem !== undefined) {
      problems.push({ field: `${field}.expression`, message: problem })
      return
    }
    if (Number.isNaN(plan.periodHours)) {
      problems.push({
        field: `${field}.periodHours`,
        message: 'required when the expression does not run evenly (how often it fires, in hours)',
      })
      return
    }
    const interval = scheduleIntervalHours(own.expression)
    if (own.periodHours !== undefined && interval !== undefined && interval !== own.periodHours) {
      problems.push({
        field: `${field}.periodHours`,
        message: `is ${own.periodHours}, but ${own.expression} runs every ${interval} hours; the staleness alarm counts in this period`,
      })
    }
    if (staleAfterPeriods * plan.periodHours > lookBackHours(plan.periodHours)) {
      problems.push({
        field: `${field}.periodHours`,
        message: `deployment.alarms.staleAfterPeriods × ${plan.periodHours} hours is more than the ${lookBackHours(plan.periodHours)} hours CloudWatch alarms can look back`,
      })
    }
  })
  const sizes = memorySizes(config.deployment.lambda.memoryMb, tablePlans(config))
  if (sizes.length > config.export.concurrency) {
    problems.push({
      field: 'export.concurrency',
      message: `${config.export.concurrency} is less than the ${sizes.length} memory sizes of tables[].memoryMb and deployment.lambda.memoryMb (${sizes.join(', ')} MB); each size is a function that needs at least one concurrent invocation of its own`,
    })
  }
  return problems
}

/**
 * Reserved concurrency per memory size (`memorySizes`), summing to `total` (`export.concurrency`) so the service
 * never sees more invocations at once: one for each extra size, the rest for the default function.
 */
export const reservedConcurrency = (sizes: readonly number[], total: number): Map<number, number> => {
  const [first, ...others] = sizes
  return new Map([[first!, Math.max(1, total - others.length)], ...others.map((size): [number, number] => [size, 1])])
}
