/** The stand-in serving the benchmark file as table `bench`, in its own process so it takes no CPU from the export. */
import { startInventoryEmulator } from '../emulator/index.ts'

const [file] = process.argv.slice(2)
if (!file) throw new Error('usage: serve.ts CSV')
const emulator = await startInventoryEmulator({ tables: [{ id: 'bench', title: 'Benchmark devices', csvFile: file }] })
process.stdout.write(`${emulator.baseUrl}\n`)
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)))
