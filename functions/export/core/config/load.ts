/**
 * The one reader of configuration files, for the CDK app, the local CLI and the Lambda: read the file, parse its
 * JSON (a syntax error is placed by line and column), validate it. Every failure is a ConfigError naming the file.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { ConfigError } from '../errors.ts'
import { parseExportConfig } from './parse.ts'
import type { ExportConfig } from './schema.ts'

/** Validates the parsed JSON of a configuration; `origin` names where it came from. */
export type ConfigValidator<T> = (json: unknown, origin: string) => T

/** The configuration file could not be read, or is not JSON: one problem, field `(file)`, and what to do. */
const fileError = (origin: string, message: string, hint: string): ConfigError =>
  new ConfigError(origin, [{ field: '(file)', message }], hint)

/** Line and column (from 1) of JSON.parse's "at position N", or of the end for "Unexpected end". */
export const jsonPosition = (text: string, message: string): { line: number; column: number } | undefined => {
  const match = /at position (\d+)/.exec(message)
  const offset = match ? Number(match[1]) : /end of JSON input/.test(message) ? text.length : undefined
  if (offset === undefined) return undefined
  const before = text.slice(0, offset).split('\n')
  return { line: before.length, column: before.at(-1)!.length + 1 }
}

/** JSON text into a value, or a ConfigError that places the syntax error by line and column. */
export const parseConfigJson = (text: string, origin: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (error) {
    const reason = (error as Error).message
    const at = jsonPosition(text, reason)
    const where = at ? ` at line ${at.line}, column ${at.column}` : ''
    throw fileError(
      origin,
      `is not valid JSON${where}: ${reason.replace(/ in JSON at position.*$/, '')}`,
      `fix the JSON in ${origin}${where}`,
    )
  }
}

export interface LoadConfigOptions<T> {
  /** Validates the JSON. @default parseExportConfig */
  readonly validate?: ConfigValidator<T>
  /** What the file is called in errors, e.g. `--config FILE`. @default the file's path */
  readonly origin?: string
  /** Reads the file as UTF-8 text. @default node:fs readFileSync */
  readonly readText?: (file: string) => string
}

/** Reads, parses and validates a configuration file; every failure names the file (and the field). */
export function loadConfigFile<T>(file: string, options: LoadConfigOptions<T> & { validate: ConfigValidator<T> }): T
export function loadConfigFile(file: string, options?: LoadConfigOptions<ExportConfig>): ExportConfig
export function loadConfigFile<T>(file: string, options: LoadConfigOptions<T> = {}): T | ExportConfig {
  const { origin = file, readText = (path: string) => readFileSync(path, 'utf8') } = options
  let text: string
  try {
    text = readText(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file' : (error as Error).message
    throw fileError(
      origin,
      `cannot be read: ${reason}`,
      `check the path of the configuration file (${resolve(file)}); config/sample.json is a starting point`,
    )
  }
  const json = parseConfigJson(text, origin)
  return options.validate === undefined ? parseExportConfig(json, origin) : options.validate(json, origin)
}
