/** Terminal output of the local runner: progress lines while it works, a summary table at the end. */
import path from 'node:path'
import {
  describeGuards,
  type RetryEvent,
  type RunRecord,
  type RunTelemetry,
  type TableConfig,
  type TableOutcome,
  type TableProgress,
} from '../export/index.ts'

export interface TerminalOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Rewrites one status line in place (on a terminal); absent when output is not a TTY. */
  readonly status?: (line: string) => void
}

/** Clears the status line, so a permanent line can be printed where it stood. */
const CLEAR_LINE = '\r\x1b[K'

/** stdout for results, stderr for progress; on a terminal, progress is one line rewritten in place. */
export const consoleOutput: TerminalOutput = (() => {
  if (!process.stderr.isTTY) {
    return { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) }
  }
  let current = ''
  return {
    out: (line) => {
      process.stderr.write(CLEAR_LINE)
      process.stdout.write(`${line}\n`)
      current = ''
    },
    err: (line) => process.stderr.write(`${CLEAR_LINE}${line}\n${current}`),
    status: (line) => {
      current = line.slice(0, Math.max(20, (process.stderr.columns ?? 120) - 1))
      process.stderr.write(`${CLEAR_LINE}${current}`)
    },
  }
})()

/** Plain progress lines come at most this often per table; a live status line at most this often overall. */
const PROGRESS_INTERVAL_MS = 2000
const STATUS_INTERVAL_MS = 200

const rate = (bytes: number, startedAt: number): string => {
  const seconds = (Date.now() - startedAt) / 1000
  return seconds > 0 ? `${formatBytes(bytes / seconds)}/s` : '-'
}

export const formatBytes = (bytes: number): string => {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`
}

const formatFields = (fields: Record<string, unknown> | undefined): string =>
  fields === undefined ? '' : ` ${JSON.stringify(fields)}`

/**
 * Telemetry that writes human-readable lines. On a terminal, the tables in flight share one status line (bytes,
 * rows, rate) rewritten in place; otherwise a plain progress line per table at most every two seconds.
 */
export const terminalTelemetry = (output: TerminalOutput = consoleOutput): RunTelemetry => {
  const lastProgress = new Map<string, number>()
  const active = new Map<string, { startedAt: number; progress: TableProgress }>()
  let lastStatus = 0
  const describe = (name: string) => {
    const entry = active.get(name)!
    const { bytes, rows } = entry.progress
    return `${name}: ${formatBytes(bytes)}, ${rows.toLocaleString('en-US')} rows, ${rate(bytes, entry.startedAt)}`
  }
  const redraw = (force = false) => {
    if (!output.status) return
    const now = Date.now()
    if (!force && now - lastStatus < STATUS_INTERVAL_MS) return
    lastStatus = now
    output.status([...active.keys()].map(describe).join(' | '))
  }
  return {
    info: (message, fields) => output.err(`${message}${formatFields(fields)}`),
    warn: (message, fields) => output.err(`warning: ${message}${formatFields(fields)}`),
    error: (message, fields) => output.err(`error: ${message}${formatFields(fields)}`),
    tableStarted: (table: TableConfig) => {
      active.set(table.name, { startedAt: Date.now(), progress: { bytes: 0, rows: 0 } })
      output.err(`${table.name}: downloading table ${table.id}`)
      redraw(true)
    },
    tableProgress: (table: TableConfig, progress: TableProgress) => {
      const entry = active.get(table.name)
      if (entry) entry.progress = progress
      if (output.status) return redraw()
      const now = Date.now()
      if (now - (lastProgress.get(table.name) ?? 0) < PROGRESS_INTERVAL_MS) return
      lastProgress.set(table.name, now)
      output.err(
        `${table.name}: ${formatBytes(progress.bytes)} received, ${progress.rows.toLocaleString('en-US')} rows, ${entry ? rate(progress.bytes, entry.startedAt) : '-'}`,
      )
    },
    tableFinished: (outcome: TableOutcome) => {
      active.delete(outcome.name)
      if (outcome.status === 'succeeded') {
        const from = outcome.format === 'xlsx' ? ` from worksheet "${outcome.sheet}" of the xlsx` : ''
        output.err(`${outcome.name}: done, ${outcome.rows?.toLocaleString('en-US')} rows${from}`)
        for (const warning of outcome.warnings ?? []) output.err(`warning: ${outcome.name}: ${warning}`)
        if (outcome.guards) output.err(`warning: ${outcome.name}: guards: ${describeGuards(outcome.guards)}`)
      } else {
        output.err(
          `${outcome.name}: ${outcome.error?.failureClass === 'guard' ? 'HELD' : 'FAILED'} [${outcome.error?.code}] ${outcome.error?.message}`,
        )
        if (outcome.error?.hint) output.err(`${outcome.name}:   next step: ${outcome.error.hint}`)
      }
      redraw(true)
    },
    retried: (event: RetryEvent) =>
      output.err(
        `${event.table ?? event.tableId ?? 'token check'}: attempt ${event.attempt} failed (${event.error.code}${event.error.status ? ` HTTP ${event.error.status}` : ''}), retrying in ${(event.delayMs / 1000).toFixed(1)} s`,
      ),
    runFinished: () => undefined,
  }
}

/** The per-table summary table printed at the end of a run. */
export const renderSummary = (record: RunRecord, warehouseRoot: string): string => {
  const header = ['table', 'status', 'rows', 'columns', 'bytes in', 'bytes out', 'seconds', 'from', 'output']
  const rows = record.tables.map((t) => [
    t.name,
    t.status === 'succeeded'
      ? `ok${t.guards ? ` (${t.guards.map((g) => `${g.code} ${g.action}`).join(', ')})` : ''}`
      : `${t.error?.failureClass === 'guard' ? 'HELD' : 'FAILED'} ${t.error?.code ?? ''}`.trim(),
    t.rows === undefined ? '-' : t.rows.toLocaleString('en-US'),
    t.columns === undefined ? '-' : String(t.columns.length),
    formatBytes(t.bytesReceived),
    t.objects.length === 0 ? '-' : formatBytes(t.objects.reduce((sum, o) => sum + o.bytes, 0)),
    (t.durationMs / 1000).toFixed(2),
    t.format ?? 'csv',
    t.objects[0] ? path.relative(process.cwd(), t.objects[0].location) || t.objects[0].location : '-',
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  const failed = record.tables.filter((t) => t.status === 'failed').length
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `run ${record.runId} for dt=${record.exportDate}: ${record.tables.length - failed} of ${record.tables.length} tables exported to ${warehouseRoot}`,
  ].join('\n')
}
