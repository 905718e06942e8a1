/**
 * The exact bundle `cdk synth` produces, loaded in a child process on the `node` of node_modules (the Lambda's
 * major) with the function's synthesized environment, invoked with the schedule's synthesized input, against
 * the inventory stand-in, s3rver and a loopback Secrets Manager. No AWS account, no network.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { TableInput } from '@aws-sdk/client-glue'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { glueTableInputProblems } from '../../functions/export/catalog/glue-rules.ts'
import {
  type BundleResource,
  type BundleTemplate,
  cdkSynth,
  exporterFunction,
  invokeBundle,
} from '../aws/synthesized-bundle.ts'
import { query } from '../support/duckdb.ts'
import { emfData, valuesOf } from '../support/emf.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'

const REPO = path.resolve(import.meta.dirname, '../..')
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:InventoryExportToken-AbCdEf'
// 20,000 devices are a few MB: enough for the parse stage to take a thread of its own (see the synth below).
// The software table is read from its workbook, 24,000 rows (1.5 MB): enough for the workbook's thread too.
const ROWS = { devices: 20_000, software: 24_000, users: 60 }

/**
 * A loopback endpoint for the AWS JSON 1.1 services the function calls: Secrets Manager GetSecretValue for
 * one secret, and a Glue catalog (GetTable / CreateTable / UpdateTable) kept in memory.
 */
interface AwsJsonBody {
  readonly SecretId?: string
  readonly DatabaseName?: string
  readonly Name?: string
  readonly TableInput?: { readonly Name?: string; readonly StorageDescriptor?: { readonly Location?: string } }
}

const startAwsJsonEndpoint = async (secretId: string, secretString: string) => {
  const requests: { target: string; body: AwsJsonBody }[] = []
  const glueTables = new Map<string, NonNullable<AwsJsonBody['TableInput']>>()
  const answer = (target: string, body: AwsJsonBody): [number, Record<string, unknown>] => {
    const tableKey = `${body.DatabaseName}.${body.Name ?? body.TableInput?.Name}`
    switch (target) {
      case 'secretsmanager.GetSecretValue':
        return body.SecretId === secretId
          ? [
              200,
              {
                ARN: secretId,
                Name: 'InventoryExportToken',
                SecretString: secretString,
                VersionStages: ['AWSCURRENT'],
              },
            ]
          : [400, { __type: 'ResourceNotFoundException', message: 'Secrets Manager cannot find the specified secret.' }]
      case 'AWSGlue.GetTable':
        return glueTables.has(tableKey)
          ? [200, { Table: glueTables.get(tableKey)! }]
          : [400, { __type: 'EntityNotFoundException', Message: 'Table not found' }]
      case 'AWSGlue.CreateTable':
      case 'AWSGlue.UpdateTable': {
        // Glue rejects what its documented rules reject; so does this endpoint.
        const problems = glueTableInputProblems((body.TableInput ?? {}) as TableInput)
        if (problems.length > 0) return [400, { __type: 'InvalidInputException', Message: problems.join('; ') }]
        glueTables.set(tableKey, body.TableInput ?? {})
        return [200, {}]
      }
      default:
        return [400, { __type: 'UnknownOperationException', message: target }]
    }
  }
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as AwsJsonBody
    const target = String(req.headers['x-amz-target'])
    requests.push({ target, body })
    const [status, reply] = answer(target, body)
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' })
    res.end(JSON.stringify(reply))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { endpoint, requests, glueTables, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

let work: string
let out: string
let template: BundleTemplate
let emulator: RunningEmulator
let s3: RunningS3
let aws: Awaited<ReturnType<typeof startAwsJsonEndpoint>>

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'lambda-bundle-'))
  out = path.join(work, 'cdk.out')
  // Two vCPUs' worth of memory, so that the export parses on a thread of its own, which loads index.mjs itself.
  const sample = JSON.parse(await readFile(path.join(REPO, 'config/sample.json'), 'utf8'))
  sample.deployment.lambda.memoryMb = 3538
  sample.tables[1].format = 'xlsx'
  const config = path.join(work, 'config.json')
  await writeFile(config, JSON.stringify(sample))
  // The stack's template and its nested stacks' (each table's schedule lives in one of them), resources together.
  template = await cdkSynth(config, out)
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: ROWS }) })
  s3 = await startS3('inventory-warehouse-test')
  aws = await startAwsJsonEndpoint(SECRET_ARN, JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }))
}, 180_000)

afterAll(async () => {
  await emulator?.close()
  await s3?.close()
  await aws?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

const resources = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type)

/** The function's environment as the stack sets it, with CloudFormation references resolved to local values. */
const functionEnvironment = (fn: BundleResource): Record<string, string> => {
  const local: Record<string, string> = { WAREHOUSE_BUCKET: s3.bucket, TOKEN_SECRET_ARN: SECRET_ARN }
  const variables = fn.Properties.Environment?.Variables ?? {}
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : local[name]!]),
  )
}

describe('the synthesized Lambda bundle', () => {
  it('exports the sample tables to S3 when invoked by hand ({}: every table) on the Lambda runtime major', async () => {
    const { fn, assetDir } = exporterFunction(template, out)
    const runtimeMajor = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime!)![1]
    // Each schedule sends its own table (per-table-invocations.test.ts runs those events); by hand, {} runs all.
    expect(resources('AWS::Scheduler::Schedule').map((s) => JSON.parse(s.Properties.Target!.Input!))).toEqual([
      { tables: ['devices'] },
      { tables: ['installed_software'] },
      { tables: ['users'] },
    ])
    const environment = functionEnvironment(fn)
    const outcome = await invokeBundle(
      {
        fn,
        assetDir,
        environment,
        sdkEnvironment: {
          ...s3.sdkEnvironment,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.endpoint,
          AWS_ENDPOINT_URL_GLUE: aws.endpoint,
        },
        scratch: work,
      },
      {},
    )

    expect(outcome).toMatchObject({ ok: true, result: { status: 'succeeded' } })
    expect(outcome.node.split('.')[0]).toBe(`v${runtimeMajor}`)
    const { exportDate, runId, tables } = outcome.result!
    expect(typeof runId).toBe('string')
    expect(tables).toEqual([
      { name: 'devices', status: 'succeeded', rows: ROWS.devices },
      { name: 'installed_software', status: 'succeeded', rows: ROWS.software },
      { name: 'users', status: 'succeeded', rows: ROWS.users },
    ])

    const shipped = JSON.parse(await readFile(path.join(assetDir, environment.EXPORT_CONFIG_FILE!), 'utf8'))
    const prefix = shipped.warehouse.prefix as string
    for (const [name, rows] of [
      ['devices', ROWS.devices],
      ['installed_software', ROWS.software],
      ['users', ROWS.users],
    ] as const) {
      const file = path.join(work, `${name}.parquet`)
      await writeFile(file, (await s3.read(`${prefix}/${name}/dt=${exportDate}/data.parquet`))!)
      const [stats] = await query(
        `SELECT count(*) AS n, min(_export_run_id) AS run, min(_source_table_id) AS source FROM read_parquet('${file}')`,
      )
      expect(stats).toMatchObject({ n: String(rows), run: runId })
    }
    const [device] = await query(
      `SELECT typeof(ram_gb) AS ram, typeof(last_seen) AS seen FROM read_parquet('${path.join(work, 'devices.parquet')}') LIMIT 1`,
    )
    expect(device).toEqual({ ram: 'BIGINT', seen: 'TIMESTAMP WITH TIME ZONE' })
    const record = JSON.parse((await s3.read(`${prefix}/_runs/dt=${exportDate}/${runId}.json`))!.toString())
    expect(record.tables.find((t: { name: string }) => t.name === 'installed_software')).toMatchObject({
      format: 'xlsx',
      rows: ROWS.software,
    })

    const secretReads = aws.requests.filter((r) => r.target.startsWith('secretsmanager.'))
    expect(secretReads).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET_ARN } }])
    const { glueDatabase } = shipped.warehouse as { glueDatabase: string }
    expect([...aws.glueTables.keys()].sort()).toEqual(
      ['devices', 'devices_latest', 'installed_software', 'installed_software_latest', 'users', 'users_latest']
        .map((name) => `${glueDatabase}.${name}`)
        .sort(),
    )
    expect(aws.glueTables.get(`${glueDatabase}.devices`)?.StorageDescriptor?.Location).toBe(
      `s3://${s3.bucket}/${prefix}/devices/`,
    )
    const data = outcome.stdout
      .split('\n')
      .filter((line) => line.startsWith('{"_aws"'))
      .flatMap((line) => emfData(JSON.parse(line)))
    expect(valuesOf(data, 'SuccessfulRuns', { service: environment.POWERTOOLS_SERVICE_NAME! })).toEqual([1])
    expect(`${outcome.stdout}${outcome.stderr}`).not.toContain(DEMO_TOKEN)
  }, 120_000)
})
