/**
 * What every command that talks to the service needs: the validated configuration, the token and the extra CA
 * certificates, or, when no service was named, the built-in stand-in with its demo tables and token.
 */
import {
  type ExportConfig,
  parseExportConfig,
  readCaCertificates,
  UsageError,
  unconfiguredTables,
} from '../export/index.ts'
import { type ExportCommand, readToken } from './args.ts'
import type { DemoService } from './demo.ts'

export interface ServiceSession {
  readonly config: ExportConfig
  readonly token: string
  /** PEM text of `source.caCertificatesFile`, when set. */
  readonly extraCaCertificates: string | undefined
  /** The stand-in, when the command runs the demo. */
  readonly demo: DemoService | undefined
}

/** Runs `work` with the session of `command`, stopping the demo stand-in afterwards. */
export const withServiceSession = async <T>(
  command: ExportCommand,
  work: (session: ServiceSession) => Promise<T>,
): Promise<T> => {
  // The stand-in is loaded only for the demo: an export from a real service does not carry its code.
  const demo = command.demo ? await (await import('./demo.ts')).startDemoService(command.exportDate) : undefined
  try {
    const format = command.tableFormat
    // With --config, the demo exports that file's tables with its settings; else its own four tables.
    const tables = command.configFile === undefined ? demo?.configInput.tables : command.configInput.tables
    const demoInput = demo && {
      source: demo.configInput.source,
      tables: (tables as readonly object[] | undefined)?.map((table) => (format ? { ...table, format } : table)),
    }
    const input = demoInput ? { ...command.configInput, ...demoInput } : command.configInput
    const config = parseExportConfig(input, command.configOrigin)
    const token = demo ? demo.token : await readToken(command.tokenFile)
    const caFile = config.source.caCertificatesFile
    const extraCaCertificates = caFile ? await readCaCertificates(caFile, command.configOrigin) : undefined
    return await work({ config, token, extraCaCertificates, demo })
  } finally {
    await demo?.close()
  }
}

/** Refuses an `--only` that names no configured table, before anything is read. */
export const checkOnly = (config: ExportConfig, only: readonly string[]): void => {
  const [unknown] = unconfiguredTables(config.tables, only)
  if (unknown !== undefined)
    throw new UsageError(
      `--only "${unknown.wanted}" is not a configured table id or name`,
      `name one of the configured tables: ${config.tables.map((t) => t.name).join(', ')}`,
    )
}
