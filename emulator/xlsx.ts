/** XLSX rendering of a table with exceljs' streaming writer: one sheet, header row, every cell as text. */
import { EventEmitter, once } from 'node:events'
import { PassThrough } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import ExcelJS from 'exceljs'
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

/**
 * The workbook as chunks. Cells are written as strings (null as an empty cell) so every cell equals the
 * CSV's text: leading zeros, decimals and timestamps survive exactly as in the CSV.
 */
export async function* xlsxChunks(title: string, records: Iterable<Row>): AsyncGenerator<Uint8Array> {
  const output = new PassThrough({ highWaterMark: OUTPUT_HIGH_WATER_MARK })
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useStyles: false, useSharedStrings: false })
  workbook.created = WORKBOOK_DATE
  workbook.modified = WORKBOOK_DATE
  const sheet = workbook.addWorksheet(sheetNameOf(title))
  const inlet = sheetInlet(sheet)
  const stop = new AbortController()

  const produce = async (): Promise<void> => {
    let inBatch = 0
    for (const record of records) {
      sheet.addRow([...record]).commit()
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
