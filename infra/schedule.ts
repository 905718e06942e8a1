/**
 * EventBridge Scheduler expressions, checked as the service checks them, so a bad one fails at `cdk synth` instead
 * of at deploy: `rate(value unit)` with a positive whole value and a unit singular for 1 and plural above, or
 * `cron(minutes hours day-of-month month day-of-week year)` with exactly one of the two day fields `?`.
 * Also works out how often a schedule runs, for the alarms that count runs in periods.
 */

interface CronField {
  readonly name: string
  readonly min: number
  readonly max: number
  /** Wildcards the field accepts besides `,` `-` `*` `/` and plain values. */
  readonly extra: string
  readonly names?: readonly string[]
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const

/** The six fields in order, with the values and wildcards of the EventBridge documentation. */
const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59, extra: '' },
  { name: 'hours', min: 0, max: 23, extra: '' },
  { name: 'day-of-month', min: 1, max: 31, extra: '?LW' },
  { name: 'month', min: 1, max: 12, extra: '', names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, extra: '?L#', names: DAYS },
  { name: 'year', min: 1970, max: 2199, extra: '' },
]

const RATE_UNIT_HOURS = { minute: 1 / 60, hour: 1, day: 24 } as const

const fieldValue = (text: string, field: CronField): number | undefined => {
  const named = field.names?.indexOf(text.toUpperCase() as never) ?? -1
  if (named >= 0) return named + 1
  if (!/^\d+$/.test(text)) return undefined
  const value = Number(text)
  return value >= field.min && value <= field.max ? value : undefined
}

/** Why one comma-separated part of a field is invalid, if it is. */
const partProblem = (part: string, field: CronField): string | undefined => {
  const bad = `${field.name} "${part}" is not valid (${field.min}-${field.max}${field.names ? ` or ${field.names[0]}-${field.names.at(-1)}` : ''})`
  if (part === '*') return undefined
  if (part === '?') return field.extra.includes('?') ? undefined : `${field.name} cannot be "?"`
  if (field.extra.includes('L') && /^(L|\d*L)$/i.test(part)) return undefined
  if (field.extra.includes('W') && /^\d{1,2}W$/i.test(part))
    return fieldValue(part.slice(0, -1), field) ? undefined : bad
  if (field.extra.includes('#') && part.includes('#')) {
    const [day = '', nth = ''] = part.split('#')
    return fieldValue(day, field) !== undefined && /^[1-5]$/.test(nth) ? undefined : bad
  }
  const [range = '', step] = part.split('/')
  if (step !== undefined && (!/^\d+$/.test(step) || Number(step) < 1))
    return `${field.name} "${part}" has a bad increment`
  if (range === '*' && step !== undefined) return undefined
  const [from = '', to] = range.split('-')
  if (fieldValue(from, field) === undefined) return bad
  if (to !== undefined && fieldValue(to, field) === undefined) return bad
  return undefined
}

const rateProblems = (body: string): string[] => {
  const match = /^(\d+) (minute|minutes|hour|hours|day|days)$/.exec(body)
  if (!match) return [`rate(${body}) must be rate(value unit) with a whole value and minute(s), hour(s) or day(s)`]
  const value = Number(match[1])
  const unit = match[2]!
  if (value < 1) return [`rate(${body}) needs a value of 1 or more`]
  if (value === 1 && unit.endsWith('s'))
    return [`rate(${body}) must use the singular unit for 1: rate(1 ${unit.slice(0, -1)})`]
  if (value > 1 && !unit.endsWith('s'))
    return [`rate(${body}) must use the plural unit above 1: rate(${value} ${unit}s)`]
  return []
}

const cronProblems = (body: string): string[] => {
  const parts = body.trim().split(/\s+/)
  if (parts.length !== 6) {
    return [
      `cron(${body}) has ${parts.length} fields; EventBridge needs six: minutes hours day-of-month month day-of-week year, e.g. cron(0 2 * * ? *)`,
    ]
  }
  const problems = CRON_FIELDS.flatMap((field, index) => {
    const value = parts[index]!
    if (field.name === 'day-of-week' && value.includes('#') && value.includes(',')) {
      return ['day-of-week with "#" must be a single expression']
    }
    return value.split(',').flatMap((part) => partProblem(part, field) ?? [])
  })
  const dayOfMonth = parts[2]!
  const dayOfWeek = parts[4]!
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    problems.push(
      `exactly one of day-of-month ("${dayOfMonth}") and day-of-week ("${dayOfWeek}") must be "?", e.g. cron(0 2 * * ? *)`,
    )
  }
  return problems
}

/** Every reason EventBridge Scheduler would refuse this recurring expression; empty when it is valid. */
export const scheduleExpressionProblems = (expression: string): string[] => {
  const match = /^(rate|cron)\((.*)\)$/.exec(expression)
  if (!match) return ['must be cron(minutes hours day-of-month month day-of-week year) or rate(value unit)']
  return match[1] === 'rate' ? rateProblems(match[2]!) : cronProblems(match[2]!)
}

/** Values a simple field takes (`*`, `N`, `A,B`, `A-B`, `*\/N`, `A/N`); undefined for anything fancier. */
const expand = (text: string, min: number, max: number): number[] | undefined => {
  const values = new Set<number>()
  for (const part of text.split(',')) {
    const match = /^(\*|\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part)
    if (!match) return undefined
    const from = match[1] === '*' ? min : Number(match[1])
    const to = match[2] !== undefined ? Number(match[2]) : match[1] === '*' || match[3] !== undefined ? max : from
    for (let value = from; value <= to; value += Number(match[3] ?? 1)) values.add(value)
  }
  return [...values].sort((a, b) => a - b)
}

/**
 * Hours between two runs when they are evenly spaced (every N minutes or hours, daily, or weekly on one day);
 * undefined when the runs are uneven or the expression is beyond this simple reading.
 */
export const scheduleIntervalHours = (expression: string): number | undefined => {
  if (scheduleExpressionProblems(expression).length > 0) return undefined
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression)
  if (rate) return Number(rate[1]) * RATE_UNIT_HOURS[rate[2] as keyof typeof RATE_UNIT_HOURS]
  const cron = /^cron\((.*)\)$/.exec(expression)
  const [minutes, hours, dayOfMonth, month, dayOfWeek, year] = cron?.[1]?.trim().split(/\s+/) ?? []
  if (year === undefined || month !== '*' || year !== '*') return undefined
  const everyDay = ['*', '?'].includes(dayOfMonth!) && ['*', '?'].includes(dayOfWeek!)
  const weekdays = dayOfWeek!.toUpperCase().replace(/[A-Z]{3}/g, (day) => String(DAYS.indexOf(day as never) + 1))
  const oneWeekday = dayOfMonth === '?' && expand(weekdays, 1, 7)?.length === 1
  if (!everyDay && !oneWeekday) return undefined
  const minuteValues = expand(minutes!, 0, 59)
  const hourValues = expand(hours!, 0, 23)
  if (!minuteValues || !hourValues) return undefined
  const times = hourValues.flatMap((hour) => minuteValues.map((minute) => hour * 60 + minute))
  if (oneWeekday) return times.length === 1 ? 168 : undefined
  const gaps = times.map((time, i) => (times[i + 1] ?? times[0]! + 24 * 60) - time)
  return gaps.every((gap) => gap === gaps[0]) ? gaps[0]! / 60 : undefined
}
