/** Terminal output of the local runner: progress lines while it works, a summary table at the end. */
import path from 'node:path'
import type { TableConfig } from '../export/config.ts'
import type { RunRecord, TableOutcome } from '../export/run-record.ts'
import type { TableProgress } from '../export/table-export.ts'
import type { RetryEvent, RunTelemetry } from '../export/telemetry.ts'

export interface TerminalOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

export const consoleOutput: TerminalOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}

const PROGRESS_INTERVAL_MS = 2000

export const formatBytes = (bytes: number): string => {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`
}

const formatFields = (fields: Record<string, unknown> | undefined): string =>
  fields === undefined ? '' : ` ${JSON.stringify(fields)}`

/** Telemetry that writes human-readable lines; progress at most every two seconds per table. */
export const terminalTelemetry = (output: TerminalOutput = consoleOutput): RunTelemetry => {
  const lastProgress = new Map<string, number>()
  return {
    info: (message, fields) => output.err(`${message}${formatFields(fields)}`),
    warn: (message, fields) => output.err(`warning: ${message}${formatFields(fields)}`),
    error: (message, fields) => output.err(`error: ${message}${formatFields(fields)}`),
    tableStarted: (table: TableConfig) => output.err(`${table.name}: downloading table ${table.id}`),
    tableProgress: (table: TableConfig, progress: TableProgress) => {
      const now = Date.now()
      if (now - (lastProgress.get(table.name) ?? 0) < PROGRESS_INTERVAL_MS) return
      lastProgress.set(table.name, now)
      output.err(
        `${table.name}: ${formatBytes(progress.bytes)} received, ${progress.rows.toLocaleString('en-US')} rows`,
      )
    },
    tableFinished: (outcome: TableOutcome) => {
      if (outcome.status === 'succeeded') {
        output.err(`${outcome.name}: done, ${outcome.rows?.toLocaleString('en-US')} rows`)
        for (const warning of outcome.warnings ?? []) output.err(`warning: ${outcome.name}: ${warning}`)
      } else {
        output.err(`${outcome.name}: FAILED [${outcome.error?.code}] ${outcome.error?.message}`)
        if (outcome.error?.hint) output.err(`${outcome.name}:   next step: ${outcome.error.hint}`)
      }
    },
    retried: (event: RetryEvent) =>
      output.err(
        `${event.tableId ?? 'token check'}: attempt ${event.attempt} failed (${event.error.code}${event.error.status ? ` HTTP ${event.error.status}` : ''}), retrying in ${(event.delayMs / 1000).toFixed(1)} s`,
      ),
    runFinished: () => undefined,
  }
}

/** The per-table summary table printed at the end of a run. */
export const renderSummary = (record: RunRecord, warehouseRoot: string): string => {
  const header = ['table', 'status', 'rows', 'columns', 'bytes in', 'bytes out', 'seconds', 'output']
  const rows = record.tables.map((t) => [
    t.name,
    t.status === 'succeeded' ? 'ok' : `FAILED ${t.error?.code ?? ''}`.trim(),
    t.rows === undefined ? '-' : t.rows.toLocaleString('en-US'),
    t.columns === undefined ? '-' : String(t.columns.length),
    formatBytes(t.bytesReceived),
    t.objects.length === 0 ? '-' : formatBytes(t.objects.reduce((sum, o) => sum + o.bytes, 0)),
    (t.durationMs / 1000).toFixed(2),
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
