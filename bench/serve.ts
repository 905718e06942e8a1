/** The stand-in serving the benchmark file (and its workbook) as table `bench`, in its own process so it takes no CPU from the export. */
import { startInventoryEmulator } from '../emulator/index.ts'

const [file, workbook] = process.argv.slice(2)
if (!file) throw new Error('usage: serve.ts CSV [XLSX]')
const emulator = await startInventoryEmulator({
  tables: [
    { id: 'bench', title: 'Benchmark devices', csvFile: file, ...(workbook ? { rawXlsx: { file: workbook } } : {}) },
  ],
})
process.stdout.write(`${emulator.baseUrl}\n`)
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)))
