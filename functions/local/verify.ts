/**
 * `npm run verify`'s checks of a deployed stack, with the AWS clients passed in: read the stack's outputs, run the
 * export for one table (or read its latest outcome), then ask Athena for the table's rows on that date, its
 * `_latest` view and its `_changes` view. Every check ends as a line of the report; the account being unreachable
 * or the stack missing ends the command instead (one coded error).
 */
import {
  type AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena'
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation'
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda'
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import {
  CHANGES_VIEW_SUFFIX,
  type ExportError,
  InternalError,
  LATEST_VIEW_SUFFIX,
  type LatestOutcome,
  latestOutcomeKey,
  PARTITION_KEY,
} from '../export/index.ts'
import { readStackOutputs, StackOutput as VerifyOutput } from './stack-outputs.ts'
import { AthenaQueryError, StackOutputMissingError, VerifyMismatchError } from './verify-errors.ts'

export interface VerifyClients {
  readonly cloudFormation: CloudFormationClient
  readonly lambda: LambdaClient
  readonly athena: AthenaClient
  readonly s3: S3Client
}

interface VerifyOptions {
  readonly stackName: string
  /** @default the first of the stack's tables */
  readonly table?: string | undefined
  /** Read the table's latest outcome instead of running the export. */
  readonly noInvoke: boolean
  /** For messages. */
  readonly region: string
  /** Waits between polls of a running query. @default 2 s */
  readonly sleep?: (ms: number) => Promise<void>
  /** Polls before a query counts as not finished. @default 150 (5 minutes at 2 s) */
  readonly maxPolls?: number
}

interface VerifyCheck {
  /** What was checked, e.g. `athena devices_latest`. */
  readonly subject: string
  readonly ok: boolean
  /** The finding: `2,502 rows`, or the coded failure. */
  readonly detail: string
  readonly error?: ExportError
  /** The table's own failure code when the export failed (AUTH_REJECTED...), which `error` wraps. */
  readonly code?: string
}

interface VerifyReport {
  readonly stack: Readonly<Record<string, string>>
  readonly table: string
  readonly checks: readonly VerifyCheck[]
  readonly ok: boolean
}

/** What the export reported for the table: the date it published and its rows. */
interface Exported {
  readonly exportDate: string
  readonly rows: number
}

/** How the export check ended, and what it exported when it succeeded. */
interface ExportCheck {
  readonly check: VerifyCheck
  readonly exported?: Exported
}

const POLL_MS = 2000
const rowsText = (rows: number): string => `${rows.toLocaleString('en-US')} rows`
const failed = (subject: string, error: ExportError): VerifyCheck => ({
  subject,
  ok: false,
  detail: error.message,
  error,
})

/** Runs every check; throws only when the account or the stack cannot be used at all. */
export const verifyStack = async (clients: VerifyClients, options: VerifyOptions): Promise<VerifyReport> => {
  const stack = await stackOutputs(clients.cloudFormation, options)
  const tables = (stack[VerifyOutput.TABLES] ?? '').split(',').filter((name) => name.length > 0)
  const table = options.table ?? tables[0] ?? ''
  const checks: VerifyCheck[] = []
  if (!tables.includes(table)) {
    const error = new StackOutputMissingError(options.stackName, [`table ${table} (its tables: ${tables.join(', ')})`])
    return { stack, table, checks: [failed(`table ${table}`, error)], ok: false }
  }
  const exportCheck = options.noInvoke
    ? await latestOutcome(clients.s3, stack, table)
    : await invokeExport(clients.lambda, stack, table)
  checks.push(exportCheck.check)
  if (exportCheck.exported !== undefined) {
    const { exportDate, rows } = exportCheck.exported
    const query = (subject: string, sql: string) => countQuery(clients.athena, stack, options, subject, sql)
    checks.push(
      expectRows(
        await query(
          `athena ${table} ${PARTITION_KEY}=${exportDate}`,
          `SELECT count(*) FROM "${table}" WHERE ${PARTITION_KEY} = '${exportDate}'`,
        ),
        rows,
      ),
    )
    const latest = `${table}${LATEST_VIEW_SUFFIX}`
    checks.push(expectRows(await query(`athena ${latest}`, `SELECT count(*) FROM "${latest}"`), rows))
    const changes = `${table}${CHANGES_VIEW_SUFFIX}`
    const changed = await query(
      `athena ${changes} ${PARTITION_KEY}=${exportDate}`,
      `SELECT count(*) FROM "${changes}" WHERE ${PARTITION_KEY} = '${exportDate}'`,
    )
    // Only keyed tables get a changes view; its absence is what the configuration asked for.
    checks.push(
      !changed.ok && /does not exist|not found/i.test(changed.detail)
        ? { subject: changed.subject, ok: true, detail: 'no such view: the table has no key (tables[].key)' }
        : changed,
    )
  }
  return { stack, table, checks, ok: checks.every((check) => check.ok) }
}

/** Every output verify reads. */
const stackOutputs = (client: CloudFormationClient, options: VerifyOptions) =>
  readStackOutputs(client, options, Object.values(VerifyOutput))

/** Runs the export of one table as the schedule does (synchronously, so its summary comes back). */
const invokeExport = async (
  client: LambdaClient,
  stack: Record<string, string>,
  table: string,
): Promise<ExportCheck> => {
  const subject = `export ${table}`
  const answer = await client.send(
    new InvokeCommand({
      FunctionName: stack[VerifyOutput.FUNCTION],
      InvocationType: 'RequestResponse',
      Payload: new TextEncoder().encode(JSON.stringify({ tables: [table] })),
    }),
  )
  const payload = parsePayload(answer.Payload)
  if (answer.FunctionError !== undefined) {
    const message = String(payload?.errorMessage ?? answer.FunctionError)
    // RunFailedError lists the tables as `name [CODE ...]`; anything else failed before the table ran.
    const code = new RegExp(`\\b${table} \\[([A-Z_]+)`).exec(message)?.[1]
    const error = new InternalError({ tableId: table, reason: `${code === undefined ? '' : `[${code}] `}${message}` })
    return { check: { subject, ok: false, detail: message, error, ...(code === undefined ? {} : { code }) } }
  }
  const summary = payload as { exportDate?: string; tables?: { name: string; status: string; rows?: number }[] }
  const outcome = summary?.tables?.find((t) => t.name === table)
  if (summary?.exportDate === undefined || outcome?.rows === undefined) {
    const error = new InternalError({ tableId: table, reason: 'the function answered without a summary of the table' })
    return { check: failed(subject, error) }
  }
  const exported = { exportDate: summary.exportDate, rows: outcome.rows }
  return {
    check: { subject: `${subject} ${PARTITION_KEY}=${exported.exportDate}`, ok: true, detail: rowsText(exported.rows) },
    exported,
  }
}

const parsePayload = (payload: Uint8Array | undefined): Record<string, unknown> | undefined => {
  if (payload === undefined || payload.length === 0) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** The table's entry in the run index (`_runs/latest/<table>.json`): how its last run ended. */
const latestOutcome = async (client: S3Client, stack: Record<string, string>, table: string): Promise<ExportCheck> => {
  const subject = `latest run of ${table}`
  const key = `${stack[VerifyOutput.PREFIX]}/${latestOutcomeKey(table)}`
  let outcome: LatestOutcome
  try {
    const answer = await client.send(new GetObjectCommand({ Bucket: stack[VerifyOutput.BUCKET], Key: key }))
    outcome = JSON.parse((await answer.Body?.transformToString('utf8')) ?? '') as LatestOutcome
  } catch (error) {
    const name = (error as Error).name
    const reason = name === 'NoSuchKey' ? 'no run has finished yet' : `${name}: ${(error as Error).message}`
    return {
      check: failed(
        subject,
        new InternalError({ tableId: table, reason: `s3://${stack[VerifyOutput.BUCKET]}/${key}: ${reason}` }),
      ),
    }
  }
  if (outcome.status !== 'succeeded' || outcome.rows === undefined) {
    const code = outcome.error?.code ?? 'UNKNOWN'
    const error = new InternalError({ tableId: table, reason: `[${code}] ${outcome.error?.message ?? 'failed'}` })
    return { check: { subject, ok: false, detail: outcome.error?.message ?? 'failed', error, code } }
  }
  const exported = { exportDate: outcome.exportDate, rows: outcome.rows }
  return {
    check: {
      subject: `${subject} ${PARTITION_KEY}=${outcome.exportDate}`,
      ok: true,
      detail: `${rowsText(outcome.rows)} (run ${outcome.runId})`,
    },
    exported,
  }
}

/** One `SELECT count(*)` in the stack's workgroup and database: start, wait, read the single cell. */
const countQuery = async (
  client: AthenaClient,
  stack: Record<string, string>,
  options: VerifyOptions,
  subject: string,
  sql: string,
): Promise<VerifyCheck & { count?: number }> => {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const started = await client.send(
    new StartQueryExecutionCommand({
      QueryString: sql,
      WorkGroup: stack[VerifyOutput.WORKGROUP],
      QueryExecutionContext: { Database: stack[VerifyOutput.DATABASE] },
    }),
  )
  const id = started.QueryExecutionId
  for (let poll = 0; poll < (options.maxPolls ?? 150); poll++) {
    const execution = await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))
    const status = execution.QueryExecution?.Status
    if (status?.State === 'SUCCEEDED') {
      const results = await client.send(new GetQueryResultsCommand({ QueryExecutionId: id }))
      const cell = results.ResultSet?.Rows?.[1]?.Data?.[0]?.VarCharValue
      const count = Number(cell)
      return { subject, ok: true, detail: rowsText(count), count }
    }
    if (status?.State === 'FAILED' || status?.State === 'CANCELLED') {
      return failed(subject, new AthenaQueryError(`${subject} (query ${id})`, status.StateChangeReason ?? status.State))
    }
    await sleep(POLL_MS)
  }
  return failed(subject, new AthenaQueryError(`${subject} (query ${id})`, 'did not finish in time'))
}

const expectRows = (check: VerifyCheck & { count?: number }, rows: number): VerifyCheck =>
  !check.ok || check.count === rows
    ? check
    : failed(check.subject, new VerifyMismatchError(check.subject, rowsText(rows), rowsText(check.count ?? Number.NaN)))

/** The report as terminal lines: `ok` lines, and `error [CODE]` / `next step:` for each failure. */
export const reportLines = (report: VerifyReport): string[] => {
  const lines = [
    `stack: function ${report.stack[VerifyOutput.FUNCTION]}, workgroup ${report.stack[VerifyOutput.WORKGROUP]}, database ${report.stack[VerifyOutput.DATABASE]}`,
  ]
  for (const check of report.checks) {
    if (check.ok) {
      lines.push(`ok    ${check.subject}: ${check.detail}`)
      continue
    }
    const code = check.code ?? check.error?.code ?? 'UNKNOWN'
    lines.push(`error [${code}]: ${check.subject}: ${check.detail}`)
    lines.push(`next step: ${nextStep(code, check.error)}`)
  }
  const failures = report.checks.filter((check) => !check.ok).length
  lines.push(
    failures === 0
      ? `verify: all ${report.checks.length} checks passed`
      : `verify: ${failures} of ${report.checks.length} checks failed`,
  )
  return lines
}

/** The table's own failure codes are the exporter's: their next steps are in docs/failure-behaviour.md. */
const nextStep = (code: string, error: ExportError | undefined): string =>
  error !== undefined && error.code === code
    ? (error.hint ?? 'see docs/failure-behaviour.md')
    : `the table failed with ${code}: docs/failure-behaviour.md says what it means; the function's log has the run`
