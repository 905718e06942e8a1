import { beforeAll, describe, expect, it } from 'vitest'
import { FailureClass, MetricName } from '../../functions/export/constants.ts'
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

  it('shows rows and bytes per configured table', () => {
    expect(dimensionValues(graph('Rows per table'), 'table')).toEqual(['devices', 'installed_software', 'users'])
    const bytes = graph('Bytes per table')
    expect(new Set(metricNames(bytes))).toEqual(new Set([MetricName.BYTES_RECEIVED, MetricName.BYTES_WRITTEN]))
    expect(dimensionValues(bytes, 'table')).toHaveLength(6)
  })

  it('draws the run duration against the function timeout', () => {
    const widget = graph('Run duration (ms) against the timeout')
    expect(metricNames(widget)).toEqual([MetricName.RUN_DURATION])
    expect(widget.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: 900_000, label: 'Function timeout' }),
    ])
  })
})
