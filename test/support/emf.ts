/**
 * What a Lambda run printed: stdout/stderr captured in-process, Embedded Metric Format documents parsed into
 * data points, and a CloudWatch alarm evaluator (M of N data points breaching, missing-data treatment) to
 * replay the synthesized alarms over the data points of a sequence of runs.
 */

import { type AlarmDefinition, breaches } from './alarm-definitions.ts'

/** One metric value as CloudWatch would store it from an EMF document. */
export interface MetricDatum {
  readonly namespace: string
  readonly name: string
  readonly unit: string | undefined
  readonly dimensions: Readonly<Record<string, string>>
  readonly values: readonly number[]
}

export interface CapturedOutput {
  /** Lines written to stdout and stderr, in order. */
  readonly lines: string[]
  /** Everything captured as one string. */
  text(): string
  /** The JSON log lines that are not EMF documents. */
  logs(): Record<string, unknown>[]
  /** The metric data points of every EMF document. */
  metrics(): MetricDatum[]
  /** Forgets what was captured so far. */
  clear(): void
  restore(): void
}

/** Captures process.stdout and process.stderr writes (Powertools writes through them) until restore(). */
export const captureOutput = (): CapturedOutput => {
  const lines: string[] = []
  const originals = { out: process.stdout.write, err: process.stderr.write }
  const capture = (chunk: unknown, ...rest: unknown[]): boolean => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((line) => line.length > 0),
    )
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined
    callback?.()
    return true
  }
  process.stdout.write = capture as typeof process.stdout.write
  process.stderr.write = capture as typeof process.stderr.write
  const json = () =>
    lines.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : []))
  return {
    lines,
    text: () => lines.join('\n'),
    logs: () => json().filter((doc) => !('_aws' in doc)),
    metrics: () => json().flatMap(emfData),
    clear: () => {
      lines.length = 0
    },
    restore: () => {
      process.stdout.write = originals.out
      process.stderr.write = originals.err
    },
  }
}

interface EmfDocument {
  readonly _aws: {
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string
      readonly Dimensions: readonly (readonly string[])[]
      readonly Metrics: readonly { readonly Name: string; readonly Unit?: string }[]
    }[]
  }
  readonly [key: string]: unknown
}

/** The data points of one EMF document: one per metric and dimension set. */
export const emfData = (doc: Record<string, unknown>): MetricDatum[] => {
  if (!('_aws' in doc)) return []
  const emf = doc as EmfDocument
  return emf._aws.CloudWatchMetrics.flatMap((directive) =>
    directive.Dimensions.flatMap((dimensionSet) =>
      directive.Metrics.map((metric) => {
        const raw = emf[metric.Name]
        return {
          namespace: directive.Namespace,
          name: metric.Name,
          unit: metric.Unit,
          dimensions: Object.fromEntries(dimensionSet.map((d) => [d, String(emf[d])])),
          values: (Array.isArray(raw) ? raw : [raw]).map(Number),
        }
      }),
    ),
  )
}

/** Values of `name` whose dimensions are exactly `dimensions` (CloudWatch matches the full set). */
export const valuesOf = (data: readonly MetricDatum[], name: string, dimensions: Record<string, string>): number[] =>
  data.filter((d) => d.name === name && sameDimensions(d.dimensions, dimensions)).flatMap((d) => d.values)

const sameDimensions = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v)

export type Statistic = 'Sum' | 'Maximum' | 'Minimum' | 'Average' | 'SampleCount'

/** A CloudWatch statistic over the values of one period; undefined when the period has none (missing data). */
export const statistic = (values: readonly number[], stat: Statistic): number | undefined => {
  if (values.length === 0) return undefined
  switch (stat) {
    case 'Sum':
      return values.reduce((a, b) => a + b, 0)
    case 'Maximum':
      return Math.max(...values)
    case 'Minimum':
      return Math.min(...values)
    case 'Average':
      return values.reduce((a, b) => a + b, 0) / values.length
    case 'SampleCount':
      return values.length
    default:
      throw new Error(`statistic ${String(stat)} is not supported by the evaluator`)
  }
}

/**
 * Per period, the value an alarm compares with its threshold: each metric's statistic over that period's
 * data points, combined by the alarm's math expression (only `MAX([a, b, ...])` is understood; anything else
 * throws, so a changed alarm cannot be evaluated wrongly in silence). Undefined when the period has no data.
 */
export const alarmSeries = (
  alarm: AlarmDefinition,
  periods: readonly (readonly MetricDatum[])[],
): (number | undefined)[] =>
  periods.map((data) => {
    const values = new Map(
      alarm.metrics.map((m) => {
        const matching = data.filter((d) => d.namespace === m.namespace)
        return [m.id, statistic(valuesOf(matching, m.metricName, { ...m.dimensions }), m.statistic as Statistic)]
      }),
    )
    if (alarm.expression === undefined) return values.get(alarm.metrics[0]!.id)
    const ids = /^MAX\(\[([\w\s,]+)\]\)$/.exec(alarm.expression)?.[1]?.split(',')
    if (ids !== undefined) {
      const present = ids.map((id) => values.get(id.trim())).filter((v): v is number => v !== undefined)
      return present.length === 0 ? undefined : Math.max(...present)
    }
    // `a - FILL(b, 0)`: no value where `a` has none (CloudWatch aligns series on their data points).
    const difference = /^(\w+) - FILL\((\w+), 0\)$/.exec(alarm.expression)
    if (difference !== null) {
      const minuend = values.get(difference[1]!)
      return minuend === undefined ? undefined : minuend - (values.get(difference[2]!) ?? 0)
    }
    throw new Error(`${alarm.logicalId}: the evaluator does not know "${alarm.expression}"`)
  })

/** The settings of one alarm that decide its state from a series of per-period values. */
export type AlarmRule = Pick<
  AlarmDefinition,
  'threshold' | 'comparisonOperator' | 'evaluationPeriods' | 'datapointsToAlarm' | 'treatMissingData'
>

export type AlarmState = 'ALARM' | 'OK' | 'INSUFFICIENT_DATA'

/**
 * The alarm's state after each period, as CloudWatch decides it: look at the last `evaluationPeriods` values,
 * ALARM when at least `datapointsToAlarm` breach. Missing values count as breaching or not, are skipped
 * ('ignore': the state stays as it was when the window has no data), or stay missing ('missing').
 */
export const evaluateAlarm = (series: readonly (number | undefined)[], rule: AlarmRule): AlarmState[] => {
  const states: AlarmState[] = []
  let state: AlarmState = 'INSUFFICIENT_DATA'
  series.forEach((_, index) => {
    // Periods before the first one of the series are missing data, as they are for a new alarm.
    const window = Array.from(
      { length: rule.evaluationPeriods },
      (_, k) => series[index - rule.evaluationPeriods + 1 + k],
    )
    const present = window.filter((v): v is number => v !== undefined)
    const breaching =
      present.filter((v) => breaches(rule, v)).length +
      (rule.treatMissingData === 'breaching' ? window.length - present.length : 0)
    if (breaching >= rule.datapointsToAlarm) state = 'ALARM'
    else if (present.length > 0 || rule.treatMissingData === 'notBreaching' || rule.treatMissingData === 'breaching')
      state = 'OK'
    else if (rule.treatMissingData === 'missing') state = 'INSUFFICIENT_DATA'
    states.push(state)
  })
  return states
}

/** A Lambda context as the runtime passes it; `remainingMs` counts down from the call. */
export const lambdaContext = (remainingMs = 900_000, requestId = 'c0ffee00-0000-4000-8000-000000000001') => {
  const deadline = Date.now() + remainingMs
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'InventoryExport-ExporterFunction',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:InventoryExport-ExporterFunction',
    memoryLimitInMB: '1769',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/InventoryExport-ExporterFunction',
    logStreamName: '2026/01/01/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }
}
