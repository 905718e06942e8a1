/** Terminal output of the local runner: progress lines while it works, a summary table at the end. */
import path from 'node:path'
import {
  describeGuards,
  type ExportError,
  isLineageColumn,
  printable,
  printableJson,
  processEnvironment,
  type RetryEvent,
  RUN_STARTED,
  type RunRecord,
  type RunTelemetry,
  type TableConfig,
  type TableOutcome,
  type TableProgress,
} from '../export/index.ts'
import type { LogFormat } from './args.ts'
import { colourEnabled, paint, Tone, toneOf } from './colour.ts'
import { localHint } from './next-step.ts'

export interface TerminalOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Rewrites one status line in place (on a terminal); absent when output is not a TTY. */
  readonly status?: (line: string) => void
  /** Whether status words on stdout (`out`) and stderr (`err`) are coloured; none when absent. */
  readonly colour?: { readonly out: boolean; readonly err: boolean }
}

/** Clears the status line, so a permanent line can be printed where it stood. */
const CLEAR_LINE = '\r\x1b[K'

/**
 * Writes to `stream` until its reader goes away (`npm start | head -1`): from then on what is written is dropped,
 * and the command runs on to its own exit status instead of ending in an EPIPE stack trace. An export goes on
 * publishing; only its lines are lost.
 */
const writerOf = (stream: NodeJS.WriteStream): ((text: string) => void) => {
  let closed = false
  stream.on('error', (error: NodeJS.ErrnoException) => {
    // Anything but a closed reader is still thrown, as it would be without this listener.
    if (error.code !== 'EPIPE') throw error
    closed = true
  })
  return (text) => {
    if (!closed) stream.write(text)
  }
}

/** stdout for results, stderr for progress; on a terminal, progress is one line rewritten in place. */
export const consoleOutput: TerminalOutput = (() => {
  const env = processEnvironment()
  const colour = { out: colourEnabled(process.stdout, env), err: colourEnabled(process.stderr, env) }
  const stdout = writerOf(process.stdout)
  const stderr = writerOf(process.stderr)
  if (!process.stderr.isTTY) {
    return {
      out: (line) => stdout(`${line}\n`),
      err: (line) => stderr(`${line}\n`),
      colour,
    }
  }
  let current = ''
  return {
    colour,
    out: (line) => {
      stderr(CLEAR_LINE)
      stdout(`${line}\n`)
      current = ''
    },
    err: (line) => stderr(`${CLEAR_LINE}${line}\n${current}`),
    status: (line) => {
      current = line.slice(0, Math.max(20, (process.stderr.columns ?? 120) - 1))
      stderr(`${CLEAR_LINE}${current}`)
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

/** Fields of a log event as plain words: `key value` pairs, lists joined; a coded error is shown on its own. */
const plainFields = (fields: Record<string, unknown> | undefined): string => {
  const words = Object.entries(fields ?? {})
    .filter(([key]) => key !== 'error')
    .map(([key, value]) => `${key} ${printable(Array.isArray(value) ? value.join(', ') : String(value))}`)
  return words.length === 0 ? '' : ` (${words.join('; ')})`
}

interface TerminalTelemetryOptions {
  /** `text` (default): plain lines; `json`: one JSON object a line, as the Lambda logs. */
  readonly logFormat?: LogFormat
  /** Where the table's bytes come from: the service (an export) or the raw archive (a reprocess). */
  readonly reading?: 'service' | 'archive' | 'warehouse'
}

/**
 * Telemetry that writes human-readable lines. On a terminal, the tables in flight share one status line (bytes,
 * rows, rate) rewritten in place; otherwise a plain progress line per table at most every two seconds.
 */
export const terminalTelemetry = (
  output: TerminalOutput = consoleOutput,
  { logFormat = 'text', reading = 'service' }: TerminalTelemetryOptions = {},
): RunTelemetry => {
  if (logFormat === 'json') return jsonTelemetry(output)
  const lastProgress = new Map<string, number>()
  const active = new Map<string, { startedAt: number; progress: TableProgress }>()
  // A failure that hits every table (a rejected token) says its next step once, not once per table.
  const hintsShown = new Set<string>()
  const nextStep = (prefix: string, hint: string | undefined) => {
    if (hint === undefined || hintsShown.has(hint)) return
    hintsShown.add(hint)
    output.err(`${prefix}next step: ${hint}`)
  }
  const colour = output.colour?.err ?? false
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
  // A history command runs the path once per date and says what it does itself, once.
  const history = reading === 'warehouse'
  return {
    info: (message, fields) => {
      if (!(history && message === RUN_STARTED)) output.err(`${message}${plainFields(fields)}`)
    },
    warn: (message, fields) => output.err(`warning: ${message}${plainFields(fields)}`),
    error: (message, fields) => {
      const error = fields?.error as Partial<ReturnType<ExportError['toJSON']>> | undefined
      const coded = typeof error?.code === 'string' ? ` [${error.code}] ${printable(String(error.message))}` : ''
      output.err(`${paint('error', Tone.BAD, colour)}: ${message}${coded}${plainFields(fields)}`)
      if (error?.code !== undefined) nextStep('', localHint(error as { code: string; hint?: string }))
    },
    tableStarted: (table: TableConfig) => {
      active.set(table.name, { startedAt: Date.now(), progress: { bytes: 0, rows: 0 } })
      // A date that takes less than the progress interval says nothing more than the command's own lines.
      if (history) lastProgress.set(table.name, Date.now())
      else {
        output.err(
          reading === 'service'
            ? `${table.name}: downloading table ${table.id}`
            : `${table.name}: reading the archived export of table ${table.id}`,
        )
      }
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
        `${table.name}: ${formatBytes(progress.bytes)} ${reading === 'service' ? 'received' : 'read'}, ${progress.rows.toLocaleString('en-US')} rows, ${entry ? rate(progress.bytes, entry.startedAt) : '-'}`,
      )
    },
    tableFinished: (outcome: TableOutcome) => {
      active.delete(outcome.name)
      if (outcome.status === 'succeeded') {
        // The sheet's name, the warnings and the guards' column headers come from the workbook or the CSV.
        const from = outcome.format === 'xlsx' ? ` from worksheet "${printable(outcome.sheet ?? '')}" of the xlsx` : ''
        if (!history) {
          output.err(
            `${outcome.name}: ${paint('done', Tone.GOOD, colour)}, ${outcome.rows?.toLocaleString('en-US')} rows${from}`,
          )
        }
        for (const warning of outcome.warnings ?? []) output.err(`warning: ${outcome.name}: ${printable(warning)}`)
        if (outcome.guards) output.err(`warning: ${outcome.name}: guards: ${printable(describeGuards(outcome.guards))}`)
        if (outcome.expiredDates) {
          output.err(`${outcome.name}: removed past its retention: dt=${outcome.expiredDates.join(', dt=')}`)
        }
      } else {
        const word = outcome.error?.failureClass === 'guard' ? 'HELD' : 'FAILED'
        output.err(
          `${outcome.name}: ${paint(word, toneOf(word), colour)} [${outcome.error?.code}] ${printable(outcome.error?.message ?? '')}`,
        )
        if (outcome.error) nextStep(`${outcome.name}:   `, localHint(outcome.error))
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

/**
 * `--log-format json`: each event one JSON object on stderr, for programs that read the run as it goes; upstream
 * text in it (a sheet's name, a warning) keeps its control characters as JSON escapes.
 */
const jsonTelemetry = (output: TerminalOutput): RunTelemetry => {
  const log = (level: string, message: string, fields?: Record<string, unknown>) =>
    output.err(printableJson({ level, time: new Date().toISOString(), message, ...fields }))
  const lastProgress = new Map<string, number>()
  return {
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    tableStarted: (table) => log('info', 'table started', { table: table.name, tableId: table.id }),
    tableProgress: (table, progress) => {
      const now = Date.now()
      if (now - (lastProgress.get(table.name) ?? 0) < PROGRESS_INTERVAL_MS) return
      lastProgress.set(table.name, now)
      log('info', 'table progress', { table: table.name, ...progress })
    },
    tableFinished: (outcome) =>
      outcome.status === 'succeeded'
        ? log('info', 'table exported', { ...outcome })
        : log('error', 'table export failed', { ...outcome }),
    retried: (event) => log('warn', 'retrying', { ...event, error: event.error.toJSON() }),
    runFinished: () => undefined,
  }
}

/** Bytes of a table's objects: its Parquet, and the raw archive kept beside it (`archiveRaw`). */
const objectBytes = (outcome: TableOutcome, kind: 'parquet' | 'archive'): string => {
  const objects = outcome.objects.filter((o) => o.key.endsWith('.parquet') === (kind === 'parquet'))
  return objects.length === 0 ? '-' : formatBytes(objects.reduce((sum, o) => sum + o.bytes, 0))
}

/**
 * The per-table summary table printed at the end of a run. Its words match `npm run check` and the run record:
 * data columns are the service's with their `__text` companions (check's count), lineage columns the five every
 * export appends; Parquet bytes are the table's data, archive bytes the compressed copy of the raw export.
 */
/** A file relative to the current folder; an `s3://` location as it is. */
const shortLocation = (location: string): string =>
  location.startsWith('s3://') ? location : path.relative(process.cwd(), location) || location

export const renderSummary = (record: RunRecord, warehouseRoot: string, colour = false): string => {
  const archived = record.tables.some((t) => t.objects.some((o) => !o.key.endsWith('.parquet')))
  // Shown when a table has recorded erasure requests: the rows they matched, left out (or held).
  const erased = record.tables.some((t) => t.erased !== undefined)
  const header = [
    'table',
    'status',
    'rows',
    ...(erased ? ['erased'] : []),
    'data columns',
    'lineage columns',
    record.mode === 'reprocess' ? 'archive read' : 'received',
    'parquet',
    ...(archived ? ['archive'] : []),
    'seconds',
    'from',
    'output',
  ]
  const rows = record.tables.map((t) => [
    t.name,
    t.status === 'succeeded'
      ? `ok${t.guards ? ` (${t.guards.map((g) => `${g.code} ${g.action}`).join(', ')})` : ''}`
      : `${t.error?.failureClass === 'guard' ? 'HELD' : 'FAILED'} ${t.error?.code ?? ''}`.trim(),
    t.rows === undefined ? '-' : t.rows.toLocaleString('en-US'),
    ...(erased ? [t.erased === undefined ? '-' : t.erased.rows.toLocaleString('en-US')] : []),
    t.columns === undefined ? '-' : String(t.columns.filter((c) => !isLineageColumn(c)).length),
    t.columns === undefined ? '-' : String(t.columns.filter(isLineageColumn).length),
    formatBytes(t.bytesReceived),
    objectBytes(t, 'parquet'),
    ...(archived ? [objectBytes(t, 'archive')] : []),
    (t.durationMs / 1000).toFixed(2),
    t.format ?? 'csv',
    t.objects[0] ? shortLocation(t.objects[0].location) : '-',
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  // Padded before painting: escape codes take no room on the screen but count in a string's length.
  const line = (cells: readonly string[], statusTone = false) =>
    cells
      .map((c, i) => {
        const padded = c.padEnd(widths[i]!)
        return statusTone && i === 1 ? paint(padded, toneOf(c), colour) : padded
      })
      .join('  ')
      .trimEnd()
  const failed = record.tables.filter((t) => t.status === 'failed').length
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(r, true)),
    '',
    `run ${record.runId} for dt=${record.exportDate}: ${record.tables.length - failed} of ${record.tables.length} tables exported to ${warehouseRoot}`,
  ].join('\n')
}
