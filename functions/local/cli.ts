/**
 * The local runner: `npm start` (export), with more commands to come. Exit status 0 = all tables exported,
 * 1 = some table failed, 2 = bad usage or configuration.
 */
import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseExportConfig } from '../export/config.ts'
import { ExportError } from '../export/errors.ts'
import { FolderWarehouseStore } from '../export/publish/fs.ts'
import { runExport } from '../export/run.ts'
import { EXPORT_USAGE, parseExportArgs, readToken } from './args.ts'
import { startDemoService } from './demo.ts'
import { consoleOutput, renderSummary, type TerminalOutput, terminalTelemetry } from './terminal.ts'

export const ExitCode = { OK: 0, TABLE_FAILED: 1, USAGE: 2 } as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

export const runExportCommand = async (
  argv: readonly string[],
  output: TerminalOutput = consoleOutput,
): Promise<ExitCode> => {
  const command = await parseExportArgs(argv)
  if (command.help) {
    output.out(EXPORT_USAGE)
    return ExitCode.OK
  }
  const demo = command.demo ? await startDemoService() : undefined
  try {
    const config = parseExportConfig(
      demo ? { ...command.configInput, ...demo.configInput } : command.configInput,
      command.configOrigin,
    )
    const token = demo ? demo.token : await readToken(command.tokenFile)
    const extraCaCertificates = config.source.caCertificatesFile
      ? await readFile(config.source.caCertificatesFile, 'utf8')
      : undefined
    const telemetry = terminalTelemetry(output)
    if (new URL(config.source.baseUrl).protocol === 'http:' && config.source.allowInsecureHttp) {
      telemetry.warn(`plain http to ${new URL(config.source.baseUrl).host}: the token crosses the network unencrypted`)
    }
    const store = new FolderWarehouseStore(command.outDir)
    if (demo) output.err(`demo: exporting the built-in stand-in service at ${demo.baseUrl}`)
    const record = await runExport(
      config,
      {
        store,
        token,
        telemetry,
        extraCaCertificates,
        spoolDirectory: path.join(os.tmpdir(), 'inventory-export-spool'),
      },
      { exportDate: command.exportDate },
    )
    output.out(renderSummary(record, store.root))
    return record.status === 'succeeded' ? ExitCode.OK : ExitCode.TABLE_FAILED
  } finally {
    await demo?.close()
  }
}

const main = async (argv: readonly string[]): Promise<ExitCode> => {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case 'export':
        return await runExportCommand(rest)
      default:
        consoleOutput.err(`unknown command "${command}"; use: export`)
        return ExitCode.USAGE
    }
  } catch (error) {
    if (error instanceof ExportError) {
      consoleOutput.err(`error [${error.code}]: ${error.message}`)
      if (error.hint) consoleOutput.err(`next step: ${error.hint}`)
      return error.failureClass === 'config' ? ExitCode.USAGE : ExitCode.TABLE_FAILED
    }
    throw error
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2))
}
