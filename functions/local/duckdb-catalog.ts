/**
 * Athena's reading of a Glue catalog, in DuckDB: each table and view is built from the `TableInput` the Lambda
 * sends to Glue, not from a definition of its own. A table reads exactly the partitions its projection names
 * (range, format and `storage.location.template`), by the table's columns and types (a column missing from a file
 * is NULL, one missing from the table is invisible); a view runs the SQL embedded in its view text. The session
 * time zone is UTC, as in Athena, so the machine's TZ changes no answer.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import type { TableInput } from '@aws-sdk/client-glue'
import type { DuckDBConnection } from '@duckdb/node-api'
import { decodePrestoView, UsageError } from '../export/index.ts'

/** DuckDB types of the Hive type names the exporter writes. */
const DUCKDB_TYPES: Readonly<Record<string, string>> = {
  string: 'VARCHAR',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
}

const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`
const DAY_MS = 86_400_000

const duckType = (hive: string | undefined): string => {
  const type = DUCKDB_TYPES[hive ?? '']
  if (type === undefined) throw new UsageError(`the local catalog cannot read the Hive type "${hive}"`)
  return type
}

/** The partition values a `yyyy-MM-dd` daily date projection names on `now` (Athena evaluates NOW in UTC). */
const projectedDates = (parameters: Readonly<Record<string, string>>, key: string, now: Date): string[] => {
  const format = parameters[`projection.${key}.format`]
  const range = parameters[`projection.${key}.range`]?.split(',').map((b) => b.trim())
  const unit = (parameters[`projection.${key}.interval.unit`] ?? 'DAYS').trim().toUpperCase()
  const interval = Number(parameters[`projection.${key}.interval`] ?? '1')
  if (parameters[`projection.${key}.type`] !== 'date' || format !== 'yyyy-MM-dd' || unit !== 'DAYS' || !range) {
    throw new UsageError(`the local catalog reads only daily yyyy-MM-dd date projections (partition key ${key})`)
  }
  const bound = (text: string) => (text.toUpperCase() === 'NOW' ? now.toISOString().slice(0, 10) : text)
  const dates: string[] = []
  const end = Date.parse(`${bound(range[1]!)}T00:00:00Z`)
  for (let day = Date.parse(`${bound(range[0]!)}T00:00:00Z`); day <= end; day += interval * DAY_MS) {
    dates.push(new Date(day).toISOString().slice(0, 10))
  }
  return dates
}

/** Data files of one partition folder, as Athena sees them: names starting with `_` or `.` are ignored. */
const partitionFiles = async (folder: string): Promise<string[]> => {
  try {
    const entries = await readdir(folder, { withFileTypes: true })
    return entries
      .filter((e) => e.isFile() && !/^[_.]/.test(e.name))
      .map((e) => path.join(folder, e.name))
      .sort()
  } catch {
    return []
  }
}

/** A table's files by partition value, where its catalog entry does not locate them (an Iceberg table's snapshot). */
export type TableFiles = ReadonlyMap<string, readonly (readonly [file: string, value: string])[]>

const tableSelect = async (
  connection: DuckDBConnection,
  input: TableInput,
  now: Date,
  listed: TableFiles,
): Promise<string> => {
  const columns = input.StorageDescriptor?.Columns ?? []
  const [key] = input.PartitionKeys ?? []
  const template = input.Parameters?.['storage.location.template']
  if (key?.Name === undefined || template === undefined) {
    throw new UsageError(`table ${input.Name} has no projected partition key; the local catalog needs one`)
  }
  const files: (readonly [file: string, value: string])[] = [...(listed.get(input.Name!) ?? [])]
  if (!listed.has(input.Name!)) {
    for (const value of projectedDates(input.Parameters ?? {}, key.Name, now)) {
      const folder = template.replaceAll(`\${${key.Name}}`, value)
      for (const file of await partitionFiles(folder)) files.push([file, value])
    }
  }
  const partition = `CAST(p.value AS ${duckType(key.Type)}) AS ${quote(key.Name)}`
  if (files.length === 0) {
    const nulls = columns.map((c) => `CAST(NULL AS ${duckType(c.Type)}) AS ${quote(c.Name!)}`)
    return `SELECT ${[...nulls, partition].join(', ')} FROM (SELECT NULL AS value) p WHERE false`
  }
  // A `<key>=<value>/` folder, as the exporter's templates name them: DuckDB reads the value from the path, so a
  // filter on the key skips files, by a literal or by a value a join finds (its dynamic filters), as Athena does.
  const hive = listed.has(input.Name!) || template.endsWith(`${key.Name}=\${${key.Name}}/`)
  const options = hive
    ? `union_by_name = true, hive_partitioning = true, hive_types = {${literal(key.Name)}: ${duckType(key.Type)}}`
    : 'union_by_name = true, filename = true'
  const source = `read_parquet([${files.map(([file]) => literal(file)).join(', ')}], ${options})`
  const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)
  const present = new Set(described.getRows().map((row) => String(row[0])))
  const selected = columns.map((c) => {
    const from = present.has(c.Name!) ? `f.${quote(c.Name!)}` : 'NULL'
    return `CAST(${from} AS ${duckType(c.Type)}) AS ${quote(c.Name!)}`
  })
  if (hive) return `SELECT ${[...selected, `f.${quote(key.Name)}`].join(', ')} FROM ${source} f`
  const values = files.map(([file, value]) => `(${literal(file)}, ${literal(value)})`).join(', ')
  return `SELECT ${[...selected, partition].join(', ')} FROM ${source} f JOIN (VALUES ${values}) p(file, value) ON f.filename = p.file`
}

/**
 * Registers every table and view of `inputs` in schema `database` (tables first), and makes it the default
 * schema so that unqualified names work as in an Athena query editor with that database chosen.
 */
export const registerCatalog = async (
  connection: DuckDBConnection,
  database: string,
  inputs: readonly TableInput[],
  now: Date,
  files: TableFiles = new Map(),
): Promise<void> => {
  await connection.run("SET TimeZone = 'UTC'")
  await connection.run(`CREATE SCHEMA IF NOT EXISTS ${quote(database)}`)
  await connection.run(`SET schema = ${literal(database)}`)
  const ordered = [...inputs].sort(
    (a, b) => Number(a.TableType === 'VIRTUAL_VIEW') - Number(b.TableType === 'VIRTUAL_VIEW'),
  )
  for (const input of ordered) {
    const name = `${quote(database)}.${quote(input.Name!)}`
    if (input.TableType === 'VIRTUAL_VIEW') {
      const view = decodePrestoView(input.ViewOriginalText)
      if (view === undefined) throw new UsageError(`view ${input.Name} has no Presto view text`)
      await connection.run(`CREATE OR REPLACE VIEW ${name} AS ${view.originalSql}`)
    } else {
      await connection.run(`CREATE OR REPLACE VIEW ${name} AS ${await tableSelect(connection, input, now, files)}`)
    }
  }
}
