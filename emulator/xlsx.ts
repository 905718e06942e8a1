/**
 * XLSX rendering of a table with exceljs' streaming writer: one sheet, header row, and typed cells as the service
 * writes them: numbers (decimals kept by a number format), dates and timestamps as date serials with a date
 * format, booleans, and shared strings for text. The cells hold what the CSV's text says (see `typedCell`).
 */
import { EventEmitter, once } from 'node:events'
import { PassThrough } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Row } from './tables.ts'

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/**
 * A fixed creation date keeps docProps/core.xml stable (exceljs would stamp "now"). The zip entries still
 * carry the time of writing, so workbook bytes differ between runs; their cells never do.
 */
const WORKBOOK_DATE = new Date(Date.UTC(2026, 0, 1))
/** Rows committed between checks for backpressure. */
const ROWS_PER_BATCH = 256
const OUTPUT_HIGH_WATER_MARK = 256 * 1024

/** Something rows can pile up in, and how to tell that it is full. */
interface Inlet {
  readonly emitter: EventEmitter
  readonly full: () => boolean
}

/**
 * exceljs writes each sheet into an internal buffer that ignores backpressure and pipes it into a
 * (readable-stream v2) PassThrough in front of the zip compressor. That is where rows pile up when
 * compression or the client is slower than row generation, so the producer waits on it. Undefined if
 * exceljs' internals change shape, which then only costs memory, never correctness.
 */
const sheetInlet = (sheet: unknown): Inlet | undefined => {
  const pipes = (sheet as { stream?: { pipes?: unknown } }).stream?.pipes
  const inlet = Array.isArray(pipes)
    ? (pipes[0] as { _writableState?: { needDrain?: unknown } } | undefined)
    : undefined
  const state = inlet?._writableState
  if (!(inlet instanceof EventEmitter) || typeof state?.needDrain !== 'boolean') return undefined
  return { emitter: inlet, full: () => state.needDrain === true }
}

const outputInlet = (output: PassThrough): Inlet => ({ emitter: output, full: () => output.writableNeedDrain })

/** Waits for 'drain' while the inlet is full; rejects with AbortError once the consumer has gone. */
const roomIn = async (inlet: Inlet | undefined, signal: AbortSignal): Promise<void> => {
  if (inlet?.full()) await once(inlet.emitter, 'drain', { signal })
}

/** Excel forbids []:*?/\ in sheet names and caps them at 31 characters. */
export const sheetNameOf = (title: string): string =>
  title
    .replace(/[[\]:*?/\\]/g, ' ')
    .slice(0, 31)
    .trim() || 'Sheet1'

const INTEGER = /^-?(0|[1-9]\d{0,14})$/
/** Up to 15 significant digits: what a spreadsheet number holds exactly. */
const DECIMAL = /^-?(0|[1-9]\d*)\.(\d+)$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2}(\.\d{1,3})?)?(Z|z|[+-]\d{2}:?\d{2})?$/

interface TypedCell {
  readonly value: string | number | boolean | Date | null
  readonly numFmt?: string
}

const significantDigits = (digits: string): number => digits.replace(/^0+/, '').length

/** An ISO instant's milliseconds, or NaN when the text is no real date and time. */
const instantOf = (text: string): { ms: number; fraction: boolean } => {
  const match = TIMESTAMP.exec(text)
  if (!match) return { ms: Number.NaN, fraction: false }
  const [, day, minutes, seconds = ':00', fraction, zone = 'Z'] = match
  const offset = /^[+-]\d{4}$/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone.toUpperCase()
  const ms = Date.parse(`${day}T${minutes}${seconds}${offset}`)
  const sameDay = !Number.isNaN(ms) && new Date(Date.parse(`${day}T00:00:00Z`)).toISOString().startsWith(day!)
  return { ms: sameDay ? ms : Number.NaN, fraction: fraction !== undefined && Number(fraction) !== 0 }
}

/**
 * The typed cell the service writes for a CSV text: whole numbers and decimals (with as many decimals shown) as
 * numbers, `true`/`false` as booleans, ISO dates and instants as dates with a date format; the rest as text.
 */
export const typedCell = (text: string | null): TypedCell => {
  if (text === null || text === '') return { value: null }
  if (INTEGER.test(text)) return { value: Number(text) }
  const decimal = DECIMAL.exec(text)
  if (decimal && significantDigits(text.replace(/[-.]/g, '')) <= 15) {
    return { value: Number(text), numFmt: `0.${'0'.repeat(decimal[2]!.length)}` }
  }
  if (/^(true|false)$/i.test(text)) return { value: text.toLowerCase() === 'true' }
  if (DATE.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`)
    if (!Number.isNaN(ms) && new Date(ms).toISOString().startsWith(text))
      return { value: new Date(ms), numFmt: 'yyyy-mm-dd' }
  }
  const instant = instantOf(text)
  if (!Number.isNaN(instant.ms)) {
    return { value: new Date(instant.ms), numFmt: instant.fraction ? 'yyyy-mm-dd hh:mm:ss.000' : 'yyyy-mm-dd hh:mm:ss' }
  }
  return { value: escapeText(text) }
}

/** As Excel writes text: a carriage return (which XML would turn into a line feed) as `_x000D_`, `_` of a literal `_xHHHH_` as `_x005F_`. */
const escapeText = (text: string): string =>
  text.replace(/_(x[0-9A-Fa-f]{4}_)/g, '_x005F_$1').replaceAll('\r', '_x000D_')

/** The workbook as chunks: the header row, then every row with typed cells (null as an empty cell). */
export async function* xlsxChunks(title: string, records: Iterable<Row>): AsyncGenerator<Uint8Array> {
  const output = new PassThrough({ highWaterMark: OUTPUT_HIGH_WATER_MARK })
  // Loaded on first use: a stand-in serving CSV only (npm start's demo) would otherwise carry exceljs' 36 MiB.
  const { default: ExcelJS } = await import('exceljs')
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useStyles: true, useSharedStrings: true })
  workbook.created = WORKBOOK_DATE
  workbook.modified = WORKBOOK_DATE
  const sheet = workbook.addWorksheet(sheetNameOf(title))
  const inlet = sheetInlet(sheet)
  const stop = new AbortController()

  const produce = async (): Promise<void> => {
    let inBatch = 0
    for (const record of records) {
      const cells = record.map(typedCell)
      const row = sheet.addRow(cells.map((cell) => cell.value))
      cells.forEach((cell, i) => {
        if (cell.numFmt !== undefined) row.getCell(i + 1).numFmt = cell.numFmt
      })
      row.commit()
      if (++inBatch < ROWS_PER_BATCH) continue
      inBatch = 0
      await roomIn(inlet, stop.signal)
      await roomIn(outputInlet(output), stop.signal)
      await nextTurn(undefined, { signal: stop.signal })
    }
    await workbook.commit()
  }

  const producing = produce().catch((error: unknown) => {
    if (!stop.signal.aborted) output.destroy(error instanceof Error ? error : new Error(String(error)))
  })
  try {
    for await (const chunk of output) yield chunk as Uint8Array
    await producing
  } finally {
    stop.abort()
    output.destroy()
  }
}
