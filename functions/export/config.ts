/**
 * The one configuration schema, shared by the CDK app, the Lambda and the local runner.
 * Every default lives here; `parseExportConfig` turns unknown input into a readonly typed object or a
 * ConfigError whose message names each offending field.
 */
import { z } from 'zod'
import { COLUMN_TYPES, DELIMITERS, TABLE_ID_PATTERN, TABLE_NAME_PATTERN } from './constants.ts'
import { ConfigError } from './errors.ts'

const isSupportedEncoding = (label: string): boolean => {
  try {
    new TextDecoder(label)
    return true
  } catch {
    return false
  }
}

const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/** One saved table of the inventory service and how to land it. */
export const TableConfigSchema = z.object({
  /** Saved-table id: the last segment of the table's permalink. */
  id: z.string().regex(TABLE_ID_PATTERN, 'must be the saved table id (letters, digits, "-" or "_")'),
  /** Table name in the warehouse, Glue and Athena. @default `table_<id>` */
  name: z
    .string()
    .regex(
      TABLE_NAME_PATTERN,
      'must be lowercase letters, digits and "_", starting with a letter (it is a path segment)',
    )
    .optional(),
  /** Character encoding of the CSV when it has no BOM. @default 'utf-8' */
  encoding: z
    .string()
    .refine(isSupportedEncoding, 'is not an encoding this runtime can decode (try "utf-8" or "windows-1252")')
    .default('utf-8'),
  /** What to do with bytes that are invalid in the encoding: fail the table, or replace them with U+FFFD. */
  invalidBytes: z.enum(['fail', 'replace']).default('fail'),
  /** Field delimiter; detected from the header line when absent. */
  delimiter: z.enum(DELIMITERS).optional(),
  /** Rows with fewer fields than the header: fail the table, or pad them with NULLs. Longer rows always fail. */
  shortRows: z.enum(['fail', 'pad']).default('fail'),
  /** Column types forced by normalized column name, e.g. `{ "serial_number": "string" }`. */
  columnTypes: z.record(z.string(), z.enum(COLUMN_TYPES)).default({}),
  /** Keep the CSV exactly as received (gzip) under the raw prefix. */
  archiveRaw: z.boolean().default(false),
})

/** The inventory service to read from. */
export const SourceConfigSchema = z
  .object({
    /** Base URL of the service, e.g. `https://inventory.example.com`. */
    baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://inventory.example.com' }),
    /** Allow plain http to a non-loopback host (logged as a warning on every run). @default false */
    allowInsecureHttp: z.boolean().default(false),
    /** Path of a PEM file with extra CA certificates for a private TLS chain. */
    caCertificatesFile: z.string().min(1).optional(),
  })
  .superRefine((source, ctx) => {
    const url = new URL(source.baseUrl)
    if (url.username || url.password) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'must not embed credentials; the token goes in the secret',
      })
    }
    if (url.search || url.hash) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'must not have a query string or fragment' })
    }
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !source.allowInsecureHttp) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'must use https (plain http is allowed for loopback, or with source.allowInsecureHttp: true)',
      })
    }
  })

/** How hard and how long to try. */
export const ExportTuningSchema = z.object({
  /** Tables downloaded at once; the service is never hit with more. @default 2 */
  concurrency: z.int().min(1).max(16).default(2),
  retry: z
    .object({
      /** Attempts per request, the first included. @default 4 */
      maxAttempts: z.int().min(1).max(10).default(4),
      /** First backoff ceiling; doubles per attempt, full jitter. @default 1000 */
      baseDelayMs: z.int().min(0).max(60_000).default(1000),
      /** Largest backoff between two attempts. @default 30000 */
      maxDelayMs: z.int().min(0).max(600_000).default(30_000),
      /** Largest `Retry-After` honoured; a longer one fails the request. @default 120 */
      maxRetryAfterSeconds: z.int().min(0).max(3600).default(120),
      /** Total time one request may spend retrying. @default 600 */
      totalBudgetSeconds: z.int().min(1).max(3600).default(600),
    })
    .prefault({}),
  timeouts: z
    .object({
      /** TCP + TLS connect timeout. @default 10 */
      connectSeconds: z.int().min(1).max(300).default(10),
      /** Longest silence while waiting for headers or body bytes. @default 120 */
      idleSeconds: z.int().min(1).max(900).default(120),
    })
    .prefault({}),
  /** In Lambda: stop starting tables when less than this remains. @default 60 */
  deadlineMarginSeconds: z.int().min(5).max(600).default(60),
})

/** Where data lands, for the Lambda (S3) and the local runner (folder). */
export const WarehouseConfigSchema = z.object({
  /** Key prefix (S3) under which tables, runs and schemas live; no leading or trailing slash. @default 'inventory' */
  prefix: z
    .string()
    .regex(
      /^([a-z0-9][a-z0-9_.-]*)(\/[a-z0-9][a-z0-9_.-]*)*$/,
      'must be path segments of lowercase letters, digits, ".", "-", "_"',
    )
    .default('inventory'),
  /** Glue database that holds one table per saved table. @default 'inventory' */
  glueDatabase: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,254}$/)
    .default('inventory'),
})

const ScheduleSchema = z.object({
  /** EventBridge Scheduler expression. @default 'cron(0 2 * * ? *)' (daily 02:00) */
  expression: z
    .string()
    .regex(/^(cron\(.+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\))$/, 'must be cron(...) or rate(N unit)')
    .default('cron(0 2 * * ? *)'),
  /** IANA time zone the cron expression is read in. @default 'UTC' */
  timeZone: z.string().min(1).default('UTC'),
  /** Length of one schedule period in hours, used by the staleness alarm. @default 24 */
  periodHours: z
    .number()
    .positive()
    .max(24 * 31)
    .default(24),
})

/** AWS-only settings read by the CDK app. */
export const DeploymentConfigSchema = z.object({
  schedule: ScheduleSchema.prefault({}),
  /** Existing secret holding the token (name or ARN); when absent the stack creates an empty one. */
  secret: z.object({ nameOrArn: z.string().min(1).optional() }).prefault({}),
  /** Existing bucket to write to; when absent the stack creates one. */
  bucket: z
    .object({
      name: z
        .string()
        .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
        .optional(),
    })
    .prefault({}),
  athena: z
    .object({
      /** Athena workgroup created for analysts. @default 'inventory' */
      workgroup: z
        .string()
        .regex(/^[a-zA-Z0-9._-]{1,128}$/)
        .default('inventory'),
      /** Per-query bytes-scanned limit. @default 10 GiB */
      bytesScannedCutoffPerQuery: z
        .int()
        .min(10 * 1024 * 1024)
        .default(10 * 1024 ** 3),
    })
    .prefault({}),
  alarms: z
    .object({
      /** Runs with persistent 401/403/5xx failures, out of `evaluationRuns`, that page. @default 2 */
      failedRunsToAlarm: z.int().min(1).default(2),
      /** Window of runs the failure alarm looks at. @default 3 */
      evaluationRuns: z.int().min(1).default(3),
      /** Page when no successful export for this many schedule periods. @default 2 */
      staleAfterPeriods: z.int().min(1).default(2),
      /** E-mail addresses subscribed to the alarm topic. */
      emails: z.array(z.email()).default([]),
    })
    .prefault({})
    .refine((a) => a.failedRunsToAlarm <= a.evaluationRuns, {
      message: 'failedRunsToAlarm must not exceed evaluationRuns',
      path: ['failedRunsToAlarm'],
    }),
  /** Place the function in a VPC (the inventory service is often private). */
  vpc: z
    .object({
      vpcId: z.string().regex(/^vpc-[0-9a-f]+$/),
      availabilityZones: z.array(z.string().min(1)).min(1),
      subnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]+$/)).min(1),
      securityGroupIds: z.array(z.string().regex(/^sg-[0-9a-f]+$/)).min(1),
    })
    .optional(),
  lambda: z
    .object({
      /** @default 1769 (one full vCPU) */
      memoryMb: z.int().min(256).max(10_240).default(1769),
      /** @default 900 */
      timeoutSeconds: z.int().min(60).max(900).default(900),
      /** /tmp size; the spool of the largest table must fit. @default 2048 */
      ephemeralStorageMb: z.int().min(512).max(10_240).default(2048),
    })
    .prefault({}),
})

export const ExportConfigSchema = z
  .object({
    source: SourceConfigSchema,
    tables: z.array(TableConfigSchema).min(1, 'must list at least one table'),
    export: ExportTuningSchema.prefault({}),
    warehouse: WarehouseConfigSchema.prefault({}),
    deployment: DeploymentConfigSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    const seenIds = new Map<string, number>()
    const seenNames = new Map<string, number>()
    config.tables.forEach((table, index) => {
      const name = table.name ?? defaultTableName(table.id)
      if (seenIds.has(table.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tables', index, 'id'],
          message: `duplicates tables[${seenIds.get(table.id)}]`,
        })
      }
      if (seenNames.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tables', index, 'name'],
          message: `"${name}" duplicates tables[${seenNames.get(name)}]`,
        })
      }
      seenIds.set(table.id, index)
      seenNames.set(name, index)
    })
  })

export type ExportConfigInput = z.input<typeof ExportConfigSchema>
type ParsedExportConfig = z.output<typeof ExportConfigSchema>
type ParsedTableConfig = z.output<typeof TableConfigSchema>

/** A table's configuration with its name resolved. */
export type TableConfig = Readonly<Omit<ParsedTableConfig, 'name'> & { name: string }>
export type SourceConfig = Readonly<z.output<typeof SourceConfigSchema>>
export type ExportTuning = Readonly<z.output<typeof ExportTuningSchema>>
export type WarehouseConfig = Readonly<z.output<typeof WarehouseConfigSchema>>
export type DeploymentConfig = Readonly<z.output<typeof DeploymentConfigSchema>>
export type ExportConfig = Readonly<Omit<ParsedExportConfig, 'tables'> & { tables: readonly TableConfig[] }>

export const defaultTableName = (id: string): string => `table_${id.toLowerCase().replace(/-/g, '_')}`

/** Validates unknown input (a parsed JSON file, CLI flags) into the typed configuration. */
export const parseExportConfig = (input: unknown, origin = 'configuration'): ExportConfig => {
  const result = ExportConfigSchema.safeParse(input)
  if (!result.success) {
    const problems = result.error.issues.map((issue) => ({
      field: formatPath(issue.path),
      message: issue.message,
    }))
    throw new ConfigError(origin, problems)
  }
  const parsed: ParsedExportConfig = result.data
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}

const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    '',
  ) || '(root)'

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
