/** The metrics the function emits (EMF), as CloudWatch metric objects for alarms and the dashboard. */
import { Duration } from 'aws-cdk-lib'
import { Metric } from 'aws-cdk-lib/aws-cloudwatch'
import { METRICS_NAMESPACE, MetricDimension, type MetricName } from '../../functions/export/index.ts'

export interface ExportMetricOptions {
  readonly statistic: 'Sum' | 'Maximum' | 'Minimum' | 'Average'
  readonly periodSeconds: number
  /** Dimensions besides `service`, e.g. `{ table: 'devices' }`. */
  readonly dimensions?: Readonly<Record<string, string>>
  readonly label?: string
}

/** One metric of the exporter: namespace METRICS_NAMESPACE, dimension `service` plus any given. */
export const exportMetric = (serviceName: string, metricName: MetricName, options: ExportMetricOptions): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [MetricDimension.SERVICE]: serviceName, ...options.dimensions },
    statistic: options.statistic,
    period: Duration.seconds(options.periodSeconds),
    ...(options.label === undefined ? {} : { label: options.label }),
  })
