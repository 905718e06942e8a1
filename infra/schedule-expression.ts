/**
 * EventBridge Scheduler's recurring expressions, checked as its documentation states them, so a typo fails
 * `cdk synth` naming the field instead of failing the deployment: `rate(value unit)` and the six-field
 * `cron(minutes hours day-of-month month day-of-week year)`. Pure; no CDK.
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
 */

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/
const CRON = /^cron\((.*)\)$/
const HOURS_PER_UNIT = { minute: 1 / 60, hour: 1, day: 24 } as const

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

interface CronField {
  readonly name: string
  readonly min: number
  readonly max: number
  readonly names?: readonly string[]
  /** Special characters besides `, - * /` this field accepts. */
  readonly special: RegExp | undefined
}

/** The six fields in order, with the ranges and special characters the documentation lists. */
const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59, special: undefined },
  { name: 'hours', min: 0, max: 23, special: undefined },
  // `?` (no value), `L` (last day), `LW` (last weekday) and `15W` (weekday nearest the 15th).
  { name: 'day-of-month', min: 1, max: 31, special: /^(\?|L|LW|\d{1,2}W)$/ },
  { name: 'month', min: 1, max: 12, names: MONTHS, special: undefined },
  // `?`, `L` or `5L` (last Friday), `3#2` (second Tuesday).
  { name: 'day-of-week', min: 1, max: 7, names: DAYS, special: /^(\?|L|[1-7]L|[1-7]#[1-5])$/ },
  { name: 'year', min: 1970, max: 2199, special: undefined },
]

const fieldValue = (text: string, field: CronField): number | undefined => {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1
  if (named >= 0) return named + 1
  if (!/^\d+$/.test(text)) return undefined
  const value = Number(text)
  return value >= field.min && value <= field.max ? value : undefined
}

/** Why one comma-separated part of a field is invalid, or undefined. */
const partProblem = (part: string, field: CronField): string | undefined => {
  if (field.special?.test(part)) return undefined
  const [range, step, ...extra] = part.split('/')
  if (extra.length > 0 || range === undefined || range === '') return `"${part}" is not a value, range or step`
  if (step !== undefined && !/^[1-9]\d*$/.test(step)) return `"${part}" has a step that is not a positive number`
  if (range === '*') return undefined
  const bounds = range.split('-')
  if (bounds.length > 2 || bounds.some((b) => fieldValue(b, field) === undefined)) {
    const names = field.names === undefined ? '' : ` or ${field.names[0]}-${field.names.at(-1)}`
    return `"${part}" is outside ${field.min}-${field.max}${names}`
  }
  return undefined
}

const cronProblem = (body: string): string | undefined => {
  const fields = body.trim().split(/\s+/)
  if (fields.length !== CRON_FIELDS.length) {
    return `cron() takes 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length}`
  }
  for (const [index, field] of CRON_FIELDS.entries()) {
    const text = fields[index]!
    if (text.includes('?') && text !== '?') return `${field.name}: "?" stands alone`
    for (const part of text.split(',')) {
      const problem = partProblem(part, field)
      if (problem !== undefined) return `${field.name}: ${problem}`
    }
  }
  const [dayOfMonth, dayOfWeek] = [fields[2], fields[4]]
  // "You can't specify the Day-of-month and Day-of-week fields in the same cron expression."
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    return 'exactly one of day-of-month and day-of-week must be "?", e.g. cron(0 2 * * ? *) or cron(0 6 ? * MON-FRI *)'
  }
  return undefined
}

/** Why EventBridge Scheduler would reject this recurring expression, or undefined when it is valid. */
export const scheduleExpressionProblem = (expression: string): string | undefined => {
  const rate = RATE.exec(expression)
  if (rate !== null) {
    const [, value, unit] = rate as unknown as [string, string, string]
    if (Number(value) < 1) return 'rate() needs a value of at least 1'
    // The documentation: "If the value is equal to 1, then the unit must be singular", plural otherwise.
    const singular = !unit.endsWith('s')
    if ((Number(value) === 1) !== singular)
      return `rate(${value} ${unit}): the unit is singular for 1 and plural otherwise`
    return undefined
  }
  const cron = CRON.exec(expression)
  if (cron !== null) return cronProblem(cron[1]!)
  if (expression.startsWith('at(')) return 'at() runs once; an export schedule must recur (rate() or cron())'
  return 'must be rate(value unit), e.g. rate(1 hour), or cron(minutes hours day-of-month month day-of-week year)'
}

/** The period of a valid rate() expression in hours; undefined for cron(), whose period the config states. */
export const ratePeriodHours = (expression: string): number | undefined => {
  const rate = RATE.exec(expression)
  if (rate === null) return undefined
  const unit = rate[2]!.replace(/s$/, '') as keyof typeof HOURS_PER_UNIT
  return Number(rate[1]) * HOURS_PER_UNIT[unit]
}
