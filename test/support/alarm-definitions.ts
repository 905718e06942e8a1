/**
 * The synthesized alarms as plain data: from a CloudFormation template (JSON) to what CloudWatch will
 * evaluate (metrics, statistic, period, threshold, comparison, window, missing-data treatment). Pure, so a
 * test can replay emitted metric data points through exactly what was deployed.
 */

export type ComparisonOperatorName =
  | 'GreaterThanOrEqualToThreshold'
  | 'GreaterThanThreshold'
  | 'LessThanThreshold'
  | 'LessThanOrEqualToThreshold'
export type TreatMissingDataName = 'breaching' | 'notBreaching' | 'ignore' | 'missing'

/** One metric an alarm reads. Intrinsic values (e.g. a function name) appear as `<LogicalId>`. */
export interface AlarmMetricDefinition {
  /** Id within the alarm's math expression; 'm' for a single-metric alarm. */
  readonly id: string
  readonly namespace: string
  readonly metricName: string
  readonly dimensions: Readonly<Record<string, string>>
  readonly statistic: string
  readonly periodSeconds: number
}

export interface AlarmDefinition {
  readonly logicalId: string
  readonly alarmName: string | undefined
  readonly description: string
  /** The math expression over `metrics` (e.g. `MAX([auth, server])`); undefined for a single metric. */
  readonly expression: string | undefined
  readonly metrics: readonly AlarmMetricDefinition[]
  readonly periodSeconds: number
  readonly threshold: number
  readonly comparisonOperator: ComparisonOperatorName
  readonly evaluationPeriods: number
  readonly datapointsToAlarm: number
  readonly treatMissingData: TreatMissingDataName
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A CloudFormation value as text: literals as they are, references as `<LogicalId>` / `<LogicalId.Attr>`. */
export const flattenValue = (value: unknown): string => {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (isObject(value)) {
    if ('Ref' in value) return `<${flattenValue(value.Ref)}>`
    const getAtt = value['Fn::GetAtt']
    if (Array.isArray(getAtt)) return `<${getAtt.map(flattenValue).join('.')}>`
    const join = value['Fn::Join']
    if (Array.isArray(join) && Array.isArray(join[1])) return join[1].map(flattenValue).join(String(join[0]))
  }
  return JSON.stringify(value)
}

const dimensionsOf = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    (Array.isArray(value) ? value : []).filter(isObject).map((d) => [flattenValue(d.Name), flattenValue(d.Value)]),
  )

const singleMetric = (props: Json): AlarmMetricDefinition => ({
  id: 'm',
  namespace: String(props.Namespace),
  metricName: String(props.MetricName),
  dimensions: dimensionsOf(props.Dimensions),
  statistic: String(props.Statistic ?? props.ExtendedStatistic),
  periodSeconds: Number(props.Period),
})

const mathMetrics = (queries: Json[]): AlarmMetricDefinition[] =>
  queries.flatMap((query) => {
    const stat = query.MetricStat
    if (!isObject(stat) || !isObject(stat.Metric)) return []
    return [
      {
        id: String(query.Id),
        namespace: String(stat.Metric.Namespace),
        metricName: String(stat.Metric.MetricName),
        dimensions: dimensionsOf(stat.Metric.Dimensions),
        statistic: String(stat.Stat),
        periodSeconds: Number(stat.Period),
      },
    ]
  })

const toDefinition = (logicalId: string, props: Json): AlarmDefinition => {
  const queries = Array.isArray(props.Metrics) ? props.Metrics.filter(isObject) : undefined
  const metrics = queries === undefined ? [singleMetric(props)] : mathMetrics(queries)
  const returned = queries?.find((query) => query.ReturnData !== false && typeof query.Expression === 'string')
  const evaluationPeriods = Number(props.EvaluationPeriods)
  return {
    logicalId,
    alarmName: typeof props.AlarmName === 'string' ? props.AlarmName : undefined,
    description: typeof props.AlarmDescription === 'string' ? props.AlarmDescription : '',
    expression: returned === undefined ? undefined : String(returned.Expression),
    metrics,
    periodSeconds: Number(props.Period ?? returned?.Period ?? metrics[0]?.periodSeconds),
    threshold: Number(props.Threshold),
    comparisonOperator: props.ComparisonOperator as ComparisonOperatorName,
    evaluationPeriods,
    datapointsToAlarm: props.DatapointsToAlarm === undefined ? evaluationPeriods : Number(props.DatapointsToAlarm),
    treatMissingData: (props.TreatMissingData ?? 'missing') as TreatMissingDataName,
  }
}

/** Every AWS::CloudWatch::Alarm of a synthesized template, in template order. */
export const alarmDefinitions = (template: unknown): AlarmDefinition[] => {
  const resources = isObject(template) && isObject(template.Resources) ? template.Resources : {}
  return Object.entries(resources).flatMap(([logicalId, resource]) =>
    isObject(resource) && resource.Type === 'AWS::CloudWatch::Alarm' && isObject(resource.Properties)
      ? [toDefinition(logicalId, resource.Properties)]
      : [],
  )
}

/** Whether one evaluated value breaches the alarm's threshold. */
export const breaches = (alarm: Pick<AlarmDefinition, 'comparisonOperator' | 'threshold'>, value: number): boolean => {
  switch (alarm.comparisonOperator) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.threshold
    case 'GreaterThanThreshold':
      return value > alarm.threshold
    case 'LessThanThreshold':
      return value < alarm.threshold
    case 'LessThanOrEqualToThreshold':
      return value <= alarm.threshold
  }
}
