/**
 * Child-process helper: parses `<head>` followed by `<MiB>` MiB of `<filler>` with the parse thread forced on, and
 * prints the outcome as one JSON line. A test runs it in a child so that a hang (microtasks that never yield, where
 * no timer can fire) is ended by the parent's kill timer instead of freezing the test runner.
 *
 * Usage: node test/support/parse-on-thread.ts <head as JSON string> <filler as JSON string> <MiB>
 */

import { DataError, ExportError } from '../../functions/export/core/errors.ts'
import { openParsedTable } from '../../functions/export/csv/parse-worker.ts'
import { DEFAULT_LIMITS } from './limits.ts'

const [head, filler, mib] = [JSON.parse(process.argv[2]!), JSON.parse(process.argv[3]!), Number(process.argv[4])]

async function* body(): AsyncGenerator<Buffer> {
  yield Buffer.from(head as string, 'latin1')
  const chunk = Buffer.from((filler as string).repeat(Math.ceil((64 * 1024) / (filler as string).length)), 'latin1')
  for (let sent = 0; sent < mib * 2 ** 20; sent += chunk.length) yield chunk
}

const options = {
  tableId: 't1',
  shortRows: 'fail',
  encoding: 'utf-8',
  invalidBytes: 'fail',
  limits: DEFAULT_LIMITS,
} as const
try {
  const parsed = await openParsedTable(body(), options, 'worker')
  let rows = 0
  try {
    for await (const batch of parsed.batches) {
      rows += batch.rowCount
      parsed.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    }
  } finally {
    await parsed.close()
  }
  console.log(JSON.stringify({ rows }))
} catch (error) {
  const code = error instanceof ExportError ? error.code : String(error)
  console.log(JSON.stringify({ code, line: error instanceof DataError ? error.line : undefined }))
}
