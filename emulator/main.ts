/** `npm run emulator`: runs the emulator in the foreground and prints how to reach it. */
import { parseCliArgs, USAGE } from './cli-args.ts'
import { demoTables } from './demo-tables.ts'
import { EmulatorError, EmulatorErrorCode } from './errors.ts'
import { startInventoryEmulator } from './server.ts'
import { DEMO_TOKENS } from './users.ts'

const run = async (): Promise<void> => {
  const options = parseCliArgs(process.argv.slice(2))
  if (options.help) {
    process.stdout.write(USAGE)
    return
  }
  const tables = demoTables({ seed: options.seed, rows: options.rows })
  const today = new Date().toISOString().slice(0, 10)
  const emulator = await startInventoryEmulator({ host: options.host, port: options.port, tables, date: today })
  const unknown = options.changes.find((change) => !tables.some((t) => t.id === change.tableId))
  if (unknown) {
    await emulator.close()
    throw new EmulatorError(
      EmulatorErrorCode.USAGE_INVALID,
      `no table ${unknown.tableId} to change; the tables are ${tables.map((t) => t.id).join(', ')}`,
    )
  }
  for (const change of options.changes) emulator.upstream.add({ ...change, from: today })
  const lines = [
    `Inventory service emulator listening on ${emulator.baseUrl}`,
    `  API doc:      ${emulator.baseUrl}/apidoc`,
    `  demo token:   ${DEMO_TOKENS.valid}   (reads every table)`,
    `  limited:      ${DEMO_TOKENS.limited}   (403 on 1005)`,
    `  revoked:      ${DEMO_TOKENS.revoked}   expired: ${DEMO_TOKENS.expired}`,
    '  tables:',
    ...tables.map((t) => `    ${t.id}  ${t.title}${t.exportEnabled === false ? '  (export disabled: 404)' : ''}`),
    ...options.changes.map(
      (c) =>
        `  upstream change: table ${c.tableId} ${c.keepRows === undefined ? `without column "${c.dropColumns?.join('", "')}"` : `serves ${c.keepRows * 100}% of its rows`}`,
    ),
    `  try: curl -H 'token: ${DEMO_TOKENS.valid}' ${emulator.baseUrl}/rest/tables/1001/csv`,
    'Press Ctrl-C to stop.',
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
  const stop = (): void => {
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/** One coded line (and the next step) instead of a stack: 2 for bad flags or a busy port, 1 for anything else. */
run().catch((error: unknown) => {
  const coded = error instanceof EmulatorError
  const code = coded ? error.code : 'EMULATOR_FAILED'
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')
  process.stderr.write(`error [${code}]: ${message}\n`)
  if (coded && error.code === EmulatorErrorCode.USAGE_INVALID) process.stderr.write('next step: run with --help\n')
  process.exitCode = coded ? 2 : 1
})
