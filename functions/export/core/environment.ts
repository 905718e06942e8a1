/**
 * The Lambda's settings, read from its environment once per container. This is the only module that reads
 * `process.env` (Powertools and the AWS SDK read their own variables themselves); the CLI gets it from here too.
 */
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { type ExportConfig, loadConfigFile, parseConfigJson, parseExportConfig } from './config.ts'
import { DEFAULT_SERVICE_NAME, LambdaEnvironment } from './constants.ts'
import { ConfigError, type ConfigProblem } from './errors.ts'
import { parseThreadCount } from './parse-threads.ts'

/** Bucket names as S3 accepts them for new buckets. */
const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/

export interface LambdaSettings {
  /** The runtime sections of the configuration (EXPORT_CONFIG_FILE or EXPORT_CONFIG), validated by the shared schema. */
  readonly config: ExportConfig
  readonly bucket: string
  /** ARN (or name) of the secret that holds the API token. */
  readonly tokenSecretId: string
  /** ARN of the secret that holds the pseudonymization key; absent when the stack made none. */
  readonly pseudonymizationSecretId?: string | undefined
  readonly serviceName: string
  /** The function's memory in MB (set by Lambda), which decides its vCPUs; absent outside Lambda. */
  readonly memoryMb?: number | undefined
  /** Threads parsing may use: what the cores, and the CPU the memory buys, pay for (core/parse-threads.ts). */
  readonly parseThreads: number
}

export type Environment = Readonly<Record<string, string | undefined>>

/** Validates the variables the stack sets; one ConfigError names every missing or invalid one. */
export const parseLambdaSettings = (
  env: Environment,
  readText: (path: string) => string = readUtf8,
  cores: number = availableParallelism(),
): LambdaSettings => {
  const problems: ConfigProblem[] = []
  const required = (name: string): string | undefined => {
    const value = env[name]?.trim()
    if (!value) problems.push({ field: name, message: 'is not set' })
    return value || undefined
  }
  const config = readConfig(env, readText, problems)
  const bucket = required(LambdaEnvironment.WAREHOUSE_BUCKET)
  const tokenSecretId = required(LambdaEnvironment.TOKEN_SECRET_ARN)
  if (bucket !== undefined && !BUCKET_NAME_PATTERN.test(bucket)) {
    problems.push({ field: LambdaEnvironment.WAREHOUSE_BUCKET, message: `"${bucket}" is not an S3 bucket name` })
  }
  if (problems.length > 0 || config === undefined || bucket === undefined || tokenSecretId === undefined) {
    throw new ConfigError('Lambda environment', problems)
  }
  const serviceName = env[LambdaEnvironment.SERVICE_NAME]?.trim() || DEFAULT_SERVICE_NAME
  const memoryMb = Number(env[LambdaEnvironment.FUNCTION_MEMORY_SIZE]) || undefined
  const pseudonymizationSecretId = env[LambdaEnvironment.PSEUDONYMIZATION_SECRET_ARN]?.trim() || undefined
  const parseThreads = parseThreadCount(cores, memoryMb)
  return { config, bucket, tokenSecretId, serviceName, memoryMb, parseThreads, pseudonymizationSecretId }
}

const readUtf8 = (path: string): string => readFileSync(path, 'utf8')

/** The configuration: the file the stack bundles (EXPORT_CONFIG_FILE), else inline JSON (EXPORT_CONFIG). */
const readConfig = (
  env: Environment,
  readText: (path: string) => string,
  problems: ConfigProblem[],
): ExportConfig | undefined => {
  const file = env[LambdaEnvironment.EXPORT_CONFIG_FILE]?.trim()
  const inline = env[LambdaEnvironment.EXPORT_CONFIG]?.trim()
  if (!file && !inline) {
    problems.push({
      field: LambdaEnvironment.EXPORT_CONFIG,
      message: `is not set (nor ${LambdaEnvironment.EXPORT_CONFIG_FILE})`,
    })
    return undefined
  }
  const field = file ? LambdaEnvironment.EXPORT_CONFIG_FILE : LambdaEnvironment.EXPORT_CONFIG
  const path = file ? resolve(env[LambdaEnvironment.TASK_ROOT] ?? '.', file) : undefined
  try {
    return path !== undefined
      ? loadConfigFile(path, { origin: field, readText })
      : parseExportConfig(parseConfigJson(inline ?? '', field), field)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    // One list for the whole environment: the file's problems are named under its variable.
    for (const problem of error.problems) {
      problems.push(
        problem.field === '(file)'
          ? { field, message: path === undefined ? problem.message : `${path} ${problem.message}` }
          : { field: `${field}.${problem.field}`, message: problem.message },
      )
    }
    return undefined
  }
}

/** The local CLI's pseudonymization key when no --pseudonymization-key-file is given. */
export const PSEUDONYMIZATION_KEY_VARIABLE = 'INVENTORY_PSEUDONYMIZATION_KEY'

/** The process's environment as it is: for the local CLI (INVENTORY_TOKEN), so no other module reads `process.env`. */
export const processEnvironment = (): Environment => process.env

let cached: LambdaSettings | undefined

/** The settings of this container: parsed from `process.env` on first use, then kept. */
export const lambdaSettings = (): LambdaSettings => {
  cached ??= parseLambdaSettings(process.env)
  return cached
}
