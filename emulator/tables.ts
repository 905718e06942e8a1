/** The saved tables the emulator serves: either generated lazily from columns and rows, or raw bytes. */

/** One row of a generated table; null is written as an empty cell. */
export type Row = readonly (string | null)[]

interface TableBase {
  /** The saved table id: the last segment of its permalink. */
  readonly id: string
  readonly title: string
  /** False answers 404, as the service does when the export feature is disabled. @default true */
  readonly exportEnabled?: boolean
  /** Served byte for byte as the `/xlsx` export (fixtures from other writers, pre-generated large workbooks). */
  readonly rawXlsx?: Uint8Array | { readonly file: string }
}

/** Rendered to RFC 4180 CSV by the emulator. `rows` is called once per export, so it can be a generator. */
export interface GeneratedTable extends TableBase {
  readonly columns: readonly string[]
  readonly rows: () => Iterable<Row>
}

/** Served byte for byte: fixture files, BOMs, UTF-16, ragged rows. */
export interface RawCsvTable extends TableBase {
  readonly rawCsv: string | Uint8Array
  /** @default 'text/csv; charset=utf-8' */
  readonly contentType?: string
}

/** Served byte for byte from a file, streamed: large pre-generated exports (benchmarks, memory tests). */
export interface CsvFileTable extends TableBase {
  readonly csvFile: string
  /** @default 'text/csv; charset=utf-8' */
  readonly contentType?: string
}

export type SavedTable = GeneratedTable | RawCsvTable | CsvFileTable

export const isRawCsvTable = (table: SavedTable): table is RawCsvTable => 'rawCsv' in table
export const isCsvFileTable = (table: SavedTable): table is CsvFileTable => 'csvFile' in table

/** Ids of the demo tables. */
export const DemoTableId = {
  DEVICES: '1001',
  SOFTWARE: '1002',
  USERS: '1003',
  RETIRED: '1004',
  PAYROLL: '1005',
} as const
export type DemoTableId = (typeof DemoTableId)[keyof typeof DemoTableId]
