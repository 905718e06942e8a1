/** The reference: DuckDB converting the same CSV to zstd Parquet, with a given number of threads. */
import { statSync } from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'

const [file, output, threads] = process.argv.slice(2)
if (!file || !output || !threads) throw new Error('usage: duckdb-copy.ts CSV PARQUET THREADS')
const instance = await DuckDBInstance.create(':memory:', { threads })
const connection = await instance.connect()
const started = performance.now()
await connection.run(`COPY (SELECT * FROM read_csv('${file}')) TO '${output}' (FORMAT parquet, COMPRESSION zstd)`)
const seconds = (performance.now() - started) / 1000
connection.closeSync()
instance.closeSync()
process.stdout.write(`${JSON.stringify({ seconds, outputBytes: statSync(output).size })}\n`)
