/**
 * Property: any table, written as CSV in any supported dialect and encoding, comes back from the real runner with
 * the same headers, the same rows, and every value equal in meaning (typed columns) or exactly (STRING columns).
 * The expected values come from how each cell was generated, not from the exporter's own parsers.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { ColumnType } from '../../functions/export/core/constants.ts'
import { DUCKDB_TYPES, type ExpectedValue, exportOneTable, readParquetTable, sha256Hex } from '../support/fixtures.ts'

const DELIMITERS = [',', ';', '\t', '|'] as const
const DAY_MS = 86_400_000
const EARLIEST = Date.parse('0002-01-01T00:00:00Z')
const LATEST = Date.parse('9998-12-31T23:59:59.999Z')

interface Cell {
  /** The CSV text; '' is an empty cell. */
  readonly text: string
  /** Its meaning, as read back (see ExpectedValue); null for an empty cell. */
  readonly value: ExpectedValue
  /** For numbers: whether the text has a decimal point (so the column is DOUBLE, not BIGINT). */
  readonly decimal?: boolean
}

type Kind = Exclude<ColumnType, 'string'> | 'string' | 'late_string'

const EMPTY: Cell = { text: '', value: null }

const bigintCell: fc.Arbitrary<Cell> = fc
  .tuple(
    fc.oneof(fc.bigInt({ min: -1000n, max: 1000n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    fc.boolean(),
  )
  .map(([n, plus]) => ({ text: `${plus && n >= 0n ? '+' : ''}${n}`, value: String(n) }))

const doubleCell: fc.Arbitrary<Cell> = fc.oneof(
  fc
    .record({
      negative: fc.boolean(),
      whole: fc.nat({ max: 99_999_999 }),
      fraction: fc.stringMatching(/^\d{1,6}$/),
      exponent: fc.option(fc.tuple(fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'), fc.integer({ min: 0, max: 30 }))),
    })
    .map(({ negative, whole, fraction, exponent }) => {
      const text = `${negative ? '-' : ''}${whole}.${fraction}${exponent ? `${exponent[0]}${exponent[1]}` : ''}`
      return { text, value: Number(text), decimal: true }
    }),
  fc.integer({ min: -99_999, max: 99_999 }).map((n) => ({ text: String(n), value: n, decimal: false })),
)

const booleanCell: fc.Arbitrary<Cell> = fc
  .tuple(fc.boolean(), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }))
  .map(([value, upper]) => ({
    text: [...String(value)].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''),
    value,
  }))

const dateCell: fc.Arbitrary<Cell> = fc
  .integer({ min: Math.ceil(EARLIEST / DAY_MS), max: Math.floor(LATEST / DAY_MS) })
  .map((days) => {
    const iso = new Date(days * DAY_MS).toISOString().slice(0, 10)
    return { text: iso, value: iso }
  })

const pad2 = (n: number): string => String(n).padStart(2, '0')

const timestampCell: fc.Arbitrary<Cell> = fc
  .record({
    ms: fc.oneof(
      fc.integer({ min: EARLIEST, max: LATEST }),
      fc.integer({ min: EARLIEST / 1000, max: Math.floor(LATEST / 1000) }).map((s) => s * 1000),
    ),
    offset: fc.integer({ min: -14 * 60, max: 14 * 60 }),
    zone: fc.constantFrom('Z', 'z', 'none', '+HH:MM', '+HHMM', '+HH'),
    separator: fc.constantFrom('T', ' ', 't'),
    fractionDigits: fc.integer({ min: 0, max: 3 }),
    extraZeros: fc.nat({ max: 6 }),
    omitSeconds: fc.boolean(),
  })
  .map(({ ms, offset: rawOffset, zone, separator, fractionDigits, extraZeros, omitSeconds }) => {
    const offset = zone === '+HH' ? Math.trunc(rawOffset / 60) * 60 : ['Z', 'z', 'none'].includes(zone) ? 0 : rawOffset
    const local = new Date(ms + offset * 60_000).toISOString() // YYYY-MM-DDTHH:MM:SS.sssZ, wall clock at the offset
    const millis = local.slice(20, 23)
    const digits = Math.max(fractionDigits, millis.replace(/0+$/, '').length)
    const fraction = digits === 0 ? '' : `.${millis.slice(0, digits)}${digits === 3 ? '0'.repeat(extraZeros) : ''}`
    const seconds = omitSeconds && fraction === '' && local.slice(17, 19) === '00' ? '' : `:${local.slice(17, 19)}`
    const sign = offset < 0 ? '-' : '+'
    const hh = pad2(Math.floor(Math.abs(offset) / 60))
    const mm = pad2(Math.abs(offset) % 60)
    const zoneText = {
      Z: 'Z',
      z: 'z',
      none: '',
      '+HH:MM': `${sign}${hh}:${mm}`,
      '+HHMM': `${sign}${hh}${mm}`,
      '+HH': `${sign}${hh}`,
    }[zone]
    const text = `${local.slice(0, 10)}${separator}${local.slice(11, 16)}${seconds}${fraction}${zoneText}`
    return { text, value: new Date(ms).toISOString() }
  })

/** Text that no typed parser could accept: typed values use only these characters, or are true/false. */
const looksTyped = (text: string): boolean => /^[\d+\-.:eEtTzZ ]*$/.test(text) || /^(true|false)$/i.test(text)
const SPECIAL = [
  ',',
  ';',
  '\t',
  '|',
  '"',
  '""',
  '\r',
  '\n',
  '\r\n',
  ' ',
  'x',
  'é',
  'ß',
  '😀',
  '漢',
  '\u0000',
  '\u00a0',
  "'",
]
/** Text a CSV can carry; U+FEFF is left out because at the start of a file it is a byte-order mark. */
const carriable = (text: string): boolean => text.isWellFormed() && !text.includes('\uFEFF')

const stringCell: fc.Arbitrary<Cell> = fc
  .oneof(
    fc.string({ unit: fc.constantFrom(...SPECIAL), minLength: 1, maxLength: 12 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
  )
  .filter((text) => carriable(text) && !looksTyped(text))
  .map((text) => ({ text, value: text }))

const TYPED_CELLS = {
  bigint: bigintCell,
  double: doubleCell,
  boolean: booleanCell,
  date: dateCell,
  timestamp: timestampCell,
} as const

const cellsOf = (kind: Kind, rows: number): fc.Arbitrary<Cell[]> => {
  const typed = kind === 'string' || kind === 'late_string' ? stringCell : TYPED_CELLS[kind]
  const maybeEmpty = fc.oneof({ arbitrary: typed, weight: 4 }, { arbitrary: fc.constant(EMPTY), weight: 1 })
  if (kind !== 'late_string') return fc.array(maybeEmpty, { minLength: rows, maxLength: rows })
  // A typed column with one text value somewhere: inference must see it, and every other value stays as written.
  return fc
    .tuple(
      fc.constantFrom(...(Object.keys(TYPED_CELLS) as (keyof typeof TYPED_CELLS)[])),
      fc.nat({ max: Math.max(0, rows - 1) }),
      stringCell,
    )
    .chain(([base, at, odd]) =>
      fc
        .array(fc.oneof({ arbitrary: TYPED_CELLS[base], weight: 4 }, { arbitrary: fc.constant(EMPTY), weight: 1 }), {
          minLength: rows,
          maxLength: rows,
        })
        .map((cells) => cells.map((cell, row) => (row === at ? odd : { text: cell.text, value: cell.text || null }))),
    )
}

/** The type the column must get, and each cell's value under it. */
const expectedColumn = (kind: Kind, cells: readonly Cell[]): { type: ColumnType; values: ExpectedValue[] } => {
  const present = cells.filter((c) => c.text !== '')
  if (present.length === 0) return { type: 'string', values: cells.map(() => null) }
  if (kind === 'string' || kind === 'late_string') return { type: 'string', values: cells.map((c) => c.value) }
  if (kind === 'double' && !present.some((c) => c.decimal)) {
    return { type: 'bigint', values: cells.map((c) => (c.text === '' ? null : String(BigInt(c.text)))) }
  }
  return { type: kind, values: cells.map((c) => c.value) }
}

const headerArb = fc
  .oneof(
    fc.constantFrom('id', 'Name', 'name', 'NAME', 'e-mail', 'E mail', '', 'Größe', 'Straße', '名前', '2024 total'),
    fc.constantFrom('column_1', '_x', 'a"b', 'semi;colon', 'tab\there', 'line\nbreak', 'pipe|d', 'c,d', ' padded '),
    fc.string({ unit: 'binary', maxLength: 15 }),
    fc.string({ unit: fc.constantFrom('a', 'B', ' ', '-', '_', 'é', '1', '.', ',', 'Ö'), maxLength: 10 }),
  )
  .filter(carriable)

const KINDS: readonly Kind[] = ['bigint', 'double', 'boolean', 'date', 'timestamp', 'string', 'late_string']

const tableArb = fc
  .record({
    columns: fc.array(fc.record({ header: headerArb, kind: fc.constantFrom(...KINDS) }), {
      minLength: 1,
      maxLength: 7,
    }),
    rows: fc.nat({ max: 12 }),
  })
  .chain(({ columns, rows }) =>
    fc
      .tuple(...columns.map((c) => cellsOf(c.kind, rows)))
      .map((cells) => columns.map((column, i) => ({ ...column, cells: cells[i]! }))),
  )

const dialectArb = fc.record({
  delimiter: fc.constantFrom(...DELIMITERS),
  forceDelimiter: fc.boolean(),
  lineEnding: fc.constantFrom('\n', '\r\n', '\r'),
  trailingNewline: fc.boolean(),
  encoding: fc.constantFrom('utf-8', 'utf-8 with BOM', 'utf-16le', 'utf-16be'),
  quoteAll: fc.boolean(),
})
type Dialect = typeof dialectArb extends fc.Arbitrary<infer D> ? D : never

/** An RFC 4180 writer: minimal quoting quotes fields with the delimiter, a quote or a line break. */
const serialize = (headers: readonly string[], rows: readonly (readonly string[])[], dialect: Dialect) => {
  // When the delimiter is detected, the header must show it and nothing else: a one-column table uses ',',
  // and header fields that contain another candidate are quoted.
  const delimiter = !dialect.forceDelimiter && headers.length === 1 ? ',' : dialect.delimiter
  const field = (text: string, header: boolean): string => {
    const quote =
      dialect.quoteAll ||
      text.includes(delimiter) ||
      /["\r\n]/.test(text) ||
      (header && !dialect.forceDelimiter && /[,;\t|]/.test(text))
    return quote ? `"${text.replaceAll('"', '""')}"` : text
  }
  // A record of one empty field is written as "" so that it is not a blank line.
  const record = (fields: readonly string[], header = false): string =>
    fields.length === 1 && fields[0] === '' ? '""' : fields.map((f) => field(f, header)).join(delimiter)
  const text =
    [record(headers, true), ...rows.map((r) => record(r))].join(dialect.lineEnding) +
    (dialect.trailingNewline ? dialect.lineEnding : '')
  const encoded = {
    'utf-8': () => Buffer.from(text, 'utf8'),
    'utf-8 with BOM': () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]),
    'utf-16le': () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    'utf-16be': () => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]),
  }[dialect.encoding]()
  return { bytes: encoded, delimiter }
}

/** Doubles compare by value: -0 and 0 are the same number. */
const byMeaning = (value: ExpectedValue): ExpectedValue => (value === 0 ? 0 : value)

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [] })
})
afterAll(() => emulator.close())

describe('any table in any dialect', () => {
  it(
    'comes back with the same headers, rows and values',
    async () => {
      let run = 0
      await fc.assert(
        fc.asyncProperty(tableArb, dialectArb, async (table, dialect) => {
          const id = `prop-${++run}`
          const rowCount = table[0]!.cells.length
          const headers = table.map((c) => c.header)
          const rows = Array.from({ length: rowCount }, (_, r) => table.map((c) => c.cells[r]!.text))
          const { bytes, delimiter } = serialize(headers, rows, dialect)
          emulator.setTable({ id, title: id, rawCsv: bytes })

          const options = dialect.forceDelimiter ? { delimiter } : {}
          const { cli, outcome, parquetFiles } = await exportOneTable(emulator.baseUrl, id, options)
          expect(cli.exitCode, JSON.stringify(outcome.error)).toBe(0)
          expect(outcome).toMatchObject({
            rows: rowCount,
            delimiter,
            bytesReceived: bytes.length,
            sha256: sha256Hex(bytes),
          })

          const expected = table.map((c) => expectedColumn(c.kind, c.cells))
          const dataColumns = outcome.columns!.slice(0, table.length)
          expect(dataColumns.map((c) => c.header)).toEqual(headers)
          expect(dataColumns.map((c) => c.type)).toEqual(expected.map((e) => e.type))
          const names = dataColumns.map((c) => c.name)
          expect(new Set(names).size).toBe(names.length)
          for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]{0,254}$/)

          const parquet = await readParquetTable(parquetFiles[0]!)
          expect(parquet.columns.slice(0, table.length)).toEqual(
            names.map((name, i) => ({ name, type: DUCKDB_TYPES[expected[i]!.type] })),
          )
          const actual = parquet.rows.map((row) => names.map((name) => byMeaning(row[name] ?? null)))
          const wanted = rows.map((_, r) => expected.map((e) => byMeaning(e.values[r]!)))
          expect(actual).toEqual(wanted)
          expect(parquet.rows.map((row) => row._source_row_number)).toEqual(rows.map((_, r) => String(r + 1)))
          emulator.removeTable(id)
        }),
        { numRuns: Number(process.env.FIDELITY_RUNS ?? 30) },
      )
    },
    Number(process.env.FIDELITY_TIMEOUT_MS ?? 120_000),
  )
})
