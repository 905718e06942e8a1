/** The ceiling: csv-parse reading the file and discarding the records, as fast as the parser goes. */
import { createReadStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { parse } from 'csv-parse'

const [file] = process.argv.slice(2)
if (!file) throw new Error('usage: parse-ceiling.ts FILE')
let records = 0
const started = performance.now()
await pipeline(
  createReadStream(file, { highWaterMark: 256 * 1024 }),
  parse({
    on_record: () => {
      records++
      return null
    },
  }),
)
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, records })}\n`)
