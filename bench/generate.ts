/**
 * The benchmark's input: a deterministic, realistic IT-asset CSV (the stand-in's device table), streamed to disk
 * in the service's exact CSV format and cached by size, so every measurement reads the same bytes.
 */
import { once } from 'node:events'
import { createWriteStream, existsSync, statSync } from 'node:fs'
import { mkdir, rename } from 'node:fs/promises'
import path from 'node:path'
import { encodeCsvRecord } from '../emulator/csv.ts'
import { DEVICE_COLUMNS, deviceRows } from '../emulator/demo-devices.ts'
import type { Row } from '../emulator/tables.ts'
import { writeWorkbook } from './workbook-writer.ts'

/** Bytes per generated row, on average (measured); used to pick a row count for a target size. */
const BYTES_PER_ROW = 224
const SEED = 20_261_122

export interface BenchInput {
  readonly file: string
  readonly bytes: number
  readonly rows: number
  readonly columns: number
}

/** The CSV of about `megabytes` MB (10^6 bytes) under `folder`, generated once. */
export const benchInput = async (folder: string, megabytes: number): Promise<BenchInput> => {
  const rows = Math.max(1, Math.round((megabytes * 1e6) / BYTES_PER_ROW))
  const file = path.join(folder, `devices-${rows}-rows.csv`)
  if (!existsSync(file)) {
    await mkdir(folder, { recursive: true })
    const partial = `${file}.partial`
    const out = createWriteStream(partial)
    let pending = encodeCsvRecord(DEVICE_COLUMNS)
    for (const row of deviceRows(SEED, rows)) {
      pending += encodeCsvRecord(row)
      if (pending.length >= 256 * 1024) {
        if (!out.write(pending)) await once(out, 'drain')
        pending = ''
      }
    }
    out.end(pending)
    await once(out, 'finish')
    await rename(partial, file)
  }
  return { file, bytes: statSync(file).size, rows, columns: DEVICE_COLUMNS.length }
}

function* withHeader(rows: Iterable<Row>): Generator<Row> {
  yield DEVICE_COLUMNS
  yield* rows
}

/**
 * The same rows as `input` as a workbook of typed cells with shared strings, as the stand-in serves them,
 * generated once beside the CSV (with a fast writer of its own: exceljs would take minutes for 300,000 rows).
 */
export const benchWorkbook = async (input: BenchInput): Promise<{ file: string; bytes: number }> => {
  const file = input.file.replace(/\.csv$/, '.xlsx')
  if (!existsSync(file)) {
    const partial = `${file}.partial`
    await writeWorkbook(partial, 'Devices', withHeader(deviceRows(SEED, input.rows)))
    await rename(partial, file)
  }
  return { file, bytes: statSync(file).size }
}
