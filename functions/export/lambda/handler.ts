/**
 * Lambda entry point: a scheduled (or manual) event and the Lambda context -> runExport() with AWS
 * dependencies: the token from Secrets Manager, S3 for the warehouse, Powertools for logs and metrics.
 * Settings, clients and the cached secret live per container; everything else per invocation.
 */
import { Logger } from '@aws-lambda-powertools/logger'
import { GlueClient } from '@aws-sdk/client-glue'
import { S3Client } from '@aws-sdk/client-s3'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import type { Context, ScheduledEvent } from 'aws-lambda'
import { glueTableCatalog } from '../catalog/glue.ts'
import { type ExportConfig, selectedTables } from '../core/config.ts'
import { FailureClass, LambdaEnvironment } from '../core/constants.ts'
import { type Environment, type LambdaSettings, lambdaSettings, parseLambdaSettings } from '../core/environment.ts'
import { ConfigError, DeadlineError, ErrorCode, ExportError, toExportError } from '../core/errors.ts'
import { type PseudonymizationKey, refuseKeyAsToken } from '../core/pseudonymization-key.ts'
import { type RunRecord, runRecordKey } from '../core/run-record.ts'
import { DEFAULT_SPOOL_DIRECTORY, type RunDependencies, runExport } from '../path/run.ts'
import { S3WarehouseStore, type S3WarehouseStoreOptions } from '../publish/s3.ts'
import { tablesWithErasureRequests } from '../schema/erasure-requests.ts'
import { archiveSource } from '../source/archive-source.ts'
import { readCaCertificates } from '../source/ca-certificates.ts'
import { serviceSource } from '../source/service-source.ts'
import { applySecretBaseUrl } from '../source/token.ts'
import { type HistoryBatch, type HistoryFinish, type HistoryPlan, runHistoryInvocation } from './history.ts'
import { type HistoryInvocation, type HistoryRequest, isHistoryEvent, parseHistoryEvent } from './history-event.ts'
import { type ExportInvocation, type InvocationRequest, parseEvent } from './invocation-event.ts'
import { createLambdaTelemetry } from './lambda-telemetry.ts'
import { PseudonymizationKeyReader, TokenSecretReader } from './secrets.ts'
import { startWatchdog } from './watchdog.ts'

/** The schedule's input as is, or an EventBridge "Scheduled Event" carrying it in `detail` (invocation-event.ts). */
export type ExportEvent = ExportInvocation | ScheduledEvent<ExportInvocation> | null | undefined

/** A history event (history-event.ts), as the state machine sends it: the plan, a batch with its dates, the finish. */
export interface HistoryEvent {
  readonly history: HistoryRequest
  readonly dates?: readonly string[]
  readonly finish?: true
  /** The plan's `lease`, which its batches and finish carry. */
  readonly lease?: string
}

/** The handler: a run's summary for a run's event, a plan's, a batch's or the finish's answer for a history event. */
export interface ExportHandler {
  (event: ExportEvent, context: Context): Promise<ExportSummary>
  (event: HistoryEvent, context: Context): Promise<HistoryPlan | HistoryBatch | HistoryFinish>
}

export { type ExportInvocation, type InvocationRequest, parseEvent }

export interface ExportSummary {
  readonly runId: string
  readonly exportDate: string
  readonly status: RunRecord['status']
  /** Where the run record was written. */
  readonly runRecord: string
  readonly tables: readonly {
    readonly name: string
    readonly status: 'succeeded' | 'failed'
    readonly rows?: number
    readonly error?: { readonly code: string; readonly status?: number; readonly message: string }
  }[]
}

/** The invocation fails with this when any table failed; the other tables were published. */
export class RunFailedError extends ExportError {
  readonly summary: ExportSummary
  constructor(summary: ExportSummary, failureClass: FailureClass) {
    const failed = summary.tables.filter((t) => t.status === 'failed')
    const list = failed
      .map(
        (t) =>
          `${t.name} [${t.error?.code ?? 'UNKNOWN'}${t.error?.status === undefined ? '' : ` HTTP ${t.error.status}`}]`,
      )
      .join(', ')
    super(
      ErrorCode.RUN_FAILED,
      failureClass,
      `export run ${summary.runId} (dt=${summary.exportDate}): ${failed.length} of ${summary.tables.length} tables failed: ${list}. ` +
        `The other tables were published; details in ${summary.runRecord}`,
      { hint: 'each failed table names its next step in the run record and the log' },
    )
    this.summary = summary
  }
}

/** Replaceable parts, for tests; the deployed handler uses the defaults. */
interface HandlerDependencies {
  /** @default the process's environment, read once per container by lambdaSettings() (environment.ts) */
  readonly environment?: Environment
  /** @default a client configured by the standard SDK environment (AWS_REGION, AWS_ENDPOINT_URL_S3, ...) */
  readonly s3Client?: S3Client
  /** @default likewise (AWS_ENDPOINT_URL_SECRETS_MANAGER, ...) */
  readonly secretsClient?: SecretsManagerClient
  /** @default likewise (AWS_ENDPOINT_URL_GLUE, ...) */
  readonly glueClient?: GlueClient
  readonly storeOptions?: Pick<S3WarehouseStoreOptions, 'partSize' | 'queueSize'>
  /** @default `<os.tmpdir()>/inventory-export-spool` */
  readonly spoolDirectory?: string
}

interface Container {
  readonly settings: LambdaSettings
  readonly s3: S3Client
  readonly glue: GlueClient
  readonly tokens: TokenSecretReader
  /** Absent when the stack made no pseudonymization secret (no table pseudonymizes). */
  readonly pseudonymizationKeys: PseudonymizationKeyReader | undefined
  readonly logger: Logger
  readonly extraCaCertificates: string | undefined
}

const openContainer = async (deps: HandlerDependencies): Promise<Container> => {
  const settings = deps.environment === undefined ? lambdaSettings() : parseLambdaSettings(deps.environment)
  const caFile = settings.config.source.caCertificatesFile
  const extraCaCertificates = caFile === undefined ? undefined : await readCaCertificates(caFile, 'Lambda environment')
  const secretsClient = deps.secretsClient ?? new SecretsManagerClient({})
  return {
    settings,
    s3: deps.s3Client ?? new S3Client({}),
    glue: deps.glueClient ?? new GlueClient({}),
    tokens: new TokenSecretReader(secretsClient, settings.tokenSecretId),
    pseudonymizationKeys:
      settings.pseudonymizationSecretId === undefined
        ? undefined
        : new PseudonymizationKeyReader(secretsClient, settings.pseudonymizationSecretId),
    logger: new Logger({ serviceName: settings.serviceName }),
    extraCaCertificates,
  }
}

/** A handler with its own container state. */
export const createHandler = (deps: HandlerDependencies = {}): ExportHandler => {
  let container: Promise<Container> | undefined
  const handle = async (
    event: ExportEvent | HistoryEvent,
    context: Context,
  ): Promise<ExportSummary | HistoryPlan | HistoryBatch | HistoryFinish> => {
    container ??= openContainer(deps).catch((error: unknown) => {
      container = undefined
      throw error
    })
    const opened = await container
    const { settings, s3, glue, tokens, pseudonymizationKeys, extraCaCertificates, logger: root } = opened
    const logger = root.createChild()
    logger.addContext(context)
    if (isHistoryEvent(event)) return historyInvocation(opened, logger, parseHistoryEvent(event), context, deps)
    const { reprocess, ...options } = parseEvent(event, settings.config)

    // What the event asks decides the source: a rebuild from the raw archive calls no service, so it needs no
    // token (and works while the secret is broken); an export reads the token, whose secret may move the base URL.
    let upstream: Upstream
    let pseudonymizationKey: PseudonymizationKey | undefined
    try {
      upstream = reprocess ? { reprocess } : await serviceAccess(tokens, settings.config)
      // Read only when a table needs it, so a stack without pseudonymized columns or erasure requests never asks.
      if (
        await needsKey(
          settings,
          options.tables,
          new S3WarehouseStore(s3, settings.bucket, settings.config.warehouse.prefix),
          pseudonymizationKeys,
        )
      ) {
        pseudonymizationKey = await pseudonymizationKeys?.read()
      }
      if (!upstream.reprocess) refuseKeyAsToken(pseudonymizationKey, upstream.token, 'the token secret')
    } catch (error) {
      const telemetry = createLambdaTelemetry({ logger, serviceName: settings.serviceName })
      telemetry.runNotStarted(toExportError(error))
      throw error
    }
    const config = upstream.reprocess ? settings.config : upstream.config

    const sensitive = upstream.reprocess ? [] : [upstream.token]
    const telemetry = createLambdaTelemetry({ logger, serviceName: settings.serviceName, sensitive })
    const deadline = deadlineSignal(context, config.export.deadlineMarginSeconds, () =>
      telemetry.warn('the time limit is near: stopping downloads and uploads in flight', {
        remainingMs: context.getRemainingTimeInMillis(),
      }),
    )
    // If the deadline's timer cannot fire (a starved event loop), the watchdog ends the process instead.
    const watchdog = startWatchdog({
      deadlineAt: deadline.firesAt,
      starvedMs: (config.export.deadlineMarginSeconds * 1000) / 4,
    })
    const store = new S3WarehouseStore(s3, settings.bucket, config.warehouse.prefix, {
      ...deps.storeOptions,
      signal: deadline.signal,
    })
    const runDeps: RunDependencies = {
      source: upstream.reprocess
        ? archiveSource(store)
        : serviceSource({ source: config.source, token: upstream.token, tuning: config.export, extraCaCertificates }),
      store,
      telemetry,
      spoolDirectory: deps.spoolDirectory,
      parseThreads: settings.parseThreads,
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
      catalog: glueTableCatalog(glue, config.warehouse.glueDatabase, store.root),
      signal: deadline.signal,
      pseudonymizationKey,
      readPseudonymizationKey:
        pseudonymizationKeys &&
        (async () => {
          const key = await pseudonymizationKeys.read()
          if (!upstream.reprocess) refuseKeyAsToken(key, upstream.token, 'the token secret')
          return key
        }),
    }
    let record: RunRecord
    try {
      record = await runExport(config, runDeps, options)
    } finally {
      deadline.dispose()
      watchdog.dispose()
      telemetry.flush()
    }
    const summary = summarize(record, `${store.root}/${runRecordKey(record.exportDate, record.runId)}`)
    if (summary.status === 'failed') {
      const firstFailure = record.tables.find((t) => t.error !== undefined)?.error
      throw new RunFailedError(summary, firstFailure?.failureClass ?? FailureClass.INTERNAL)
    }
    return summary
  }
  // Which answer comes back is decided by the event's shape, as the overloads say.
  return handle as ExportHandler
}

/**
 * A history event (history.ts): no token and no service, the pseudonymization key always (the conditions are its
 * digests), the same store, deadline and watchdog as a run.
 */
const historyInvocation = async (
  { settings, s3, glue, pseudonymizationKeys }: Container,
  logger: Logger,
  invocation: HistoryInvocation,
  context: Context,
  deps: HandlerDependencies,
): Promise<HistoryPlan | HistoryBatch | HistoryFinish> => {
  const { config } = settings
  const telemetry = createLambdaTelemetry({ logger, serviceName: settings.serviceName })
  let pseudonymizationKey: PseudonymizationKey
  try {
    if (pseudonymizationKeys === undefined) {
      throw new ConfigError(
        'history event',
        [
          {
            field: LambdaEnvironment.PSEUDONYMIZATION_SECRET_ARN,
            message:
              "is not set: a history event carries digests made with the pseudonymization key (its key check, an erasure's conditions), and a rewrite may pseudonymize with it; this function has no secret for it",
          },
        ],
        'set deployment.historyOperations to true and deploy: the stack then makes (or imports) the key and the state machine; nothing was changed',
      )
    }
    pseudonymizationKey = await pseudonymizationKeys.read()
  } catch (error) {
    telemetry.runNotStarted(toExportError(error))
    throw error
  }
  const deadline = deadlineSignal(context, config.export.deadlineMarginSeconds, () =>
    telemetry.warn('the time limit is near: stopping the date in flight', {
      remainingMs: context.getRemainingTimeInMillis(),
    }),
  )
  const watchdog = startWatchdog({
    deadlineAt: deadline.firesAt,
    starvedMs: (config.export.deadlineMarginSeconds * 1000) / 4,
  })
  const store = new S3WarehouseStore(s3, settings.bucket, config.warehouse.prefix, {
    ...deps.storeOptions,
    signal: deadline.signal,
  })
  try {
    return await runHistoryInvocation(config, invocation, {
      store,
      telemetry,
      spoolDirectory: deps.spoolDirectory ?? DEFAULT_SPOOL_DIRECTORY,
      pseudonymizationKey,
      catalog: glueTableCatalog(glue, config.warehouse.glueDatabase, store.root),
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
      marginMs: config.export.deadlineMarginSeconds * 1000,
    })
  } finally {
    deadline.dispose()
    watchdog.dispose()
    telemetry.flush()
  }
}

/**
 * Whether the run needs the pseudonymization key: a table pseudonymizes, or (when the stack has the key's secret)
 * a table of the run has recorded erasure requests, whose digests the key matches.
 */
const needsKey = async (
  settings: LambdaSettings,
  wanted: readonly string[] | undefined,
  store: S3WarehouseStore,
  keys: PseudonymizationKeyReader | undefined,
): Promise<boolean> => {
  const tables = selectedTables(settings.config.tables, wanted)
  if (tables.some((t) => t.columns.pseudonymize.length > 0)) return true
  if (keys === undefined) return false
  const erased = await tablesWithErasureRequests(store)
  return tables.some((t) => erased.has(t.name))
}

/** The event's choice of source: the raw archive (reprocess), or the service with the token and its settings. */
type Upstream =
  | { readonly reprocess: true }
  | { readonly reprocess: false; readonly token: string; readonly config: ExportConfig }

const serviceAccess = async (tokens: TokenSecretReader, config: ExportConfig): Promise<Upstream> => {
  const secret = await tokens.read()
  return { reprocess: false, token: secret.token, config: applySecretBaseUrl(config, secret) }
}

/** The deployed entry point. */
export const handler = createHandler()

/** Fires at (remaining - margin / 2): in-flight work stops while there is still time to record the run. */
const deadlineSignal = (context: Context, marginSeconds: number, onFire: () => void) => {
  const controller = new AbortController()
  const fireInMs = context.getRemainingTimeInMillis() - (marginSeconds * 1000) / 2
  const fire = () => {
    onFire()
    controller.abort(
      new DeadlineError({
        reason: `stopped ${marginSeconds / 2} s before the function's time limit; its upload was aborted and the previous data is kept`,
      }),
    )
  }
  const timer = setTimeout(fire, Math.min(Math.max(0, fireInMs), 2 ** 31 - 1))
  return { signal: controller.signal, firesAt: Date.now() + fireInMs, dispose: () => clearTimeout(timer) }
}

const summarize = (record: RunRecord, runRecord: string): ExportSummary => ({
  runId: record.runId,
  exportDate: record.exportDate,
  status: record.status,
  runRecord,
  tables: record.tables.map((t) => ({
    name: t.name,
    status: t.status,
    ...(t.rows === undefined ? {} : { rows: t.rows }),
    ...(t.error === undefined
      ? {}
      : {
          error: {
            code: t.error.code,
            ...(t.error.status === undefined ? {} : { status: t.error.status }),
            message: t.error.message,
          },
        }),
  })),
})
