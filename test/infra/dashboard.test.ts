import { beforeAll, describe, expect, it } from 'vitest'
import { FailureClass, MetricName } from '../../functions/export/core/constants.ts'
import { resourcesOfType, sampleConfigInput, synthesize } from './synth.ts'

type Widget = {
  type: string
  properties: {
    title?: string
    metrics?: unknown[][]
    annotations?: { horizontal?: { value: number; label: string }[] }
  }
}

/** The dashboard body with references replaced by a marker, parsed back into widgets. */
const dashboardWidgets = (body: unknown): Widget[] => {
  const parts = (body as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]
  const text = parts.map((part) => (typeof part === 'string' ? part : 'REF')).join('')
  return (JSON.parse(text) as { widgets: Widget[] }).widgets
}

describe('the dashboard', () => {
  let widgets: Widget[]
  let dashboardName: unknown
  beforeAll(() => {
    const { template } = synthesize(sampleConfigInput())
    const [[, dashboard]] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard') as [
      [string, Record<string, unknown>],
    ]
    widgets = dashboardWidgets(dashboard.DashboardBody)
    dashboardName = dashboard.DashboardName
  })

  const graph = (title: string): Widget => {
    const widget = widgets.find((w) => w.properties.title === title)
    if (!widget) throw new Error(`no widget titled ${title}`)
    return widget
  }
  const metricNames = (widget: Widget): string[] => (widget.properties.metrics ?? []).map((m) => String(m[1]))
  const dimensionValues = (widget: Widget, dimension: string): string[] =>
    (widget.properties.metrics ?? []).map((m) => String(m[m.indexOf(dimension) + 1]))

  it('is named after the stack and shows the alarms first', () => {
    expect(dashboardName).toBe('InventoryExport')
    expect(widgets[0]?.type).toBe('alarm')
  })

  it('shows runs and tables succeeded and failed', () => {
    expect(metricNames(graph('Runs'))).toEqual([MetricName.RUNS, MetricName.SUCCESSFUL_RUNS])
    expect(metricNames(graph('Tables succeeded and failed'))).toEqual([
      MetricName.TABLES_SUCCEEDED,
      MetricName.TABLES_FAILED,
    ])
  })

  it('shows table failures by every failure class', () => {
    const widget = graph('Table failures by class')
    expect(new Set(metricNames(widget))).toEqual(new Set([MetricName.TABLE_FAILURES]))
    expect(dimensionValues(widget, 'failureClass')).toEqual(Object.values(FailureClass))
  })

  const searches = (widget: Widget): string[] =>
    (widget.properties.metrics ?? []).map((m) => String((m[0] as { expression?: string }).expression))

  it('shows status, duration, rows and bytes of every table with one search per measure, whatever the number of tables', () => {
    const search = (metricName: string, statistic: string) =>
      `SEARCH('{InventoryExport,service,table} MetricName="${metricName}" service="inventory-export"', '${statistic}', 86400)`
    expect(searches(graph('Status per table (1 = succeeded, 0 = failed)'))).toEqual([
      search(MetricName.TABLES_SUCCEEDED, 'Minimum'),
    ])
    const duration = graph('Duration per table (ms) against the timeout')
    expect(searches(duration)).toEqual([search(MetricName.TABLE_DURATION, 'Maximum')])
    expect(duration.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: 900_000, label: 'Function timeout' }),
    ])
    expect(searches(graph('Rows per table'))).toEqual([search(MetricName.ROWS, 'Maximum')])
    expect(searches(graph('Bytes per table'))).toEqual([
      search(MetricName.BYTES_RECEIVED, 'Maximum'),
      search(MetricName.BYTES_WRITTEN, 'Maximum'),
    ])
  })

  it('draws the run duration against the function timeout', () => {
    const widget = graph('Run duration (ms) against the timeout')
    expect(metricNames(widget)).toEqual([MetricName.RUN_DURATION])
    expect(widget.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: 900_000, label: 'Function timeout' }),
    ])
  })
})
