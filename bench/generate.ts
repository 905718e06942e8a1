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
import { INVENTORY_COLUMNS, inventoryRows } from './inventory.ts'
import { SHAPE_COLUMNS, shapeRows, shapeTables } from './shapes.ts'
import { SPARSE_COLUMNS, sparseRows } from './sparse.ts'
import { writeWorkbook } from './workbook-writer.ts'

const SEED = 20_261_122
/** bench:shapes' default seed (bench/shapes-run.ts). */
const SHAPES = shapeTables(20_261_201)

/**
 * The bench's datasets: the device table as the stand-in serves it, a wider, sparser variant of it, and a table
 * shaped like a real device inventory (timestamps, dates, two-decimal doubles, addresses).
 */
export const DATASETS = {
  devices: { columns: DEVICE_COLUMNS, rows: deviceRows, bytesPerRow: 224 },
  sparse: { columns: SPARSE_COLUMNS, rows: sparseRows, bytesPerRow: 249 },
  inventory: { columns: INVENTORY_COLUMNS, rows: inventoryRows, bytesPerRow: 292 },
  // The generated shapes of `npm run bench:shapes` at its default seed: tens, hundreds, thousands and tens of
  // thousands of distinct values per repeating column.
  shapes_1: { columns: SHAPE_COLUMNS, rows: (_, count) => shapeRows(SHAPES[0]!, count), bytesPerRow: 311 },
  shapes_2: { columns: SHAPE_COLUMNS, rows: (_, count) => shapeRows(SHAPES[1]!, count), bytesPerRow: 331 },
  shapes_3: { columns: SHAPE_COLUMNS, rows: (_, count) => shapeRows(SHAPES[2]!, count), bytesPerRow: 327 },
  shapes_4: { columns: SHAPE_COLUMNS, rows: (_, count) => shapeRows(SHAPES[3]!, count), bytesPerRow: 325 },
} as const satisfies Record<
  string,
  { columns: readonly string[]; rows: (seed: number, count: number) => Generator<Row>; bytesPerRow: number }
>
export type Dataset = keyof typeof DATASETS

export interface BenchInput {
  readonly file: string
  readonly bytes: number
  readonly rows: number
  readonly columns: number
}

/**
 * The CSV of about `megabytes` MB (10^6 bytes) of `dataset` under `folder`, generated once. `bytesPerRow` is
 * measured on the generated rows and picks the row count for a target size.
 */
export const benchInput = async (
  folder: string,
  megabytes: number,
  dataset: Dataset = 'devices',
): Promise<BenchInput> => {
  const { columns, rows: rowsOf, bytesPerRow } = DATASETS[dataset]
  const rows = Math.max(1, Math.round((megabytes * 1e6) / bytesPerRow))
  const file = path.join(folder, `${dataset}-${rows}-rows.csv`)
  if (!existsSync(file)) {
    await mkdir(folder, { recursive: true })
    const partial = `${file}.partial`
    const out = createWriteStream(partial)
    let pending = encodeCsvRecord(columns)
    for (const row of rowsOf(SEED, rows)) {
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
  return { file, bytes: statSync(file).size, rows, columns: columns.length }
}

function* withHeader(columns: Row, rows: Iterable<Row>): Generator<Row> {
  yield columns
  yield* rows
}

/**
 * The same rows as `input` as a workbook of typed cells with shared strings, as the stand-in serves them,
 * generated once beside the CSV (with a fast writer of its own: exceljs would take minutes for 300,000 rows).
 */
export const benchWorkbook = async (
  input: BenchInput,
  dataset: Dataset = 'devices',
): Promise<{ file: string; bytes: number }> => {
  const file = input.file.replace(/\.csv$/, '.xlsx')
  if (!existsSync(file)) {
    const partial = `${file}.partial`
    const { columns, rows } = DATASETS[dataset]
    await writeWorkbook(partial, 'Devices', withHeader(columns, rows(SEED, input.rows)))
    await rename(partial, file)
  }
  return { file, bytes: statSync(file).size }
}
