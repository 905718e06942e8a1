/**
 * `npm run verify` against recorded-style AWS answers: mocked clients (aws-sdk-client-mock) assert the exact
 * requests (DescribeStacks, Invoke, StartQueryExecution/GetQueryExecution/GetQueryResults, GetObject) and the
 * report's lines. The answers' shapes follow what the services return (Athena's header row first, a Lambda
 * function error as `FunctionError` with the error as payload).
 */
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena'
import {
  CloudFormationClient,
  CloudFormationServiceException,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation'
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda'
import { GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3'
import { mockClient } from 'aws-sdk-client-mock'
import { beforeEach, describe, expect, it } from 'vitest'
import { main } from '../../../functions/local/commands.ts'
import type { VerifyClients } from '../../../functions/local/verify.ts'
import { runVerifyCommand, VERIFY_USAGE } from '../../../functions/local/verify-command.ts'

const REGION = 'eu-west-1'
const OUTPUTS = {
  ExportFunctionName: 'InventoryExport-ExporterFunction-AbC123',
  AthenaWorkgroupName: 'inventory',
  GlueDatabaseName: 'inventory',
  WarehouseBucketName: 'inventoryexport-warehousebucket-1x2y3z',
  WarehousePrefix: 'inventory',
  ExportedTables: 'devices,users',
  TokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:InventoryExport/inventory-token-AbCdEf',
}
const metadata = { $metadata: { httpStatusCode: 200 } }
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

const summary = {
  runId: '2026-11-22T02-00-04Z-7f3a',
  exportDate: '2026-11-22',
  status: 'succeeded',
  runRecord: 's3://inventoryexport-warehousebucket-1x2y3z/inventory/_runs/dt=2026-11-22/2026-11-22T02-00-04Z-7f3a.json',
  tables: [{ name: 'devices', status: 'succeeded', rows: 2502 }],
}

const setup = () => {
  const clients: VerifyClients = {
    cloudFormation: new CloudFormationClient({ region: REGION }),
    lambda: new LambdaClient({ region: REGION }),
    athena: new AthenaClient({ region: REGION }),
    s3: new S3Client({ region: REGION }),
  }
  const mocks = {
    cloudFormation: mockClient(clients.cloudFormation),
    lambda: mockClient(clients.lambda),
    athena: mockClient(clients.athena),
    s3: mockClient(clients.s3),
  }
  mocks.cloudFormation.on(DescribeStacksCommand).resolves({
    ...metadata,
    Stacks: [
      {
        StackName: 'InventoryExport',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date('2026-11-01T10:00:00Z'),
        Outputs: Object.entries(OUTPUTS).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  })
  mocks.lambda
    .on(InvokeCommand)
    .resolves({ ...metadata, StatusCode: 200, ExecutedVersion: '$LATEST', Payload: encode(summary) as never })
  // Three queries in order: the table on the date, _latest, _changes; each RUNNING once, then SUCCEEDED.
  const counts = ['2502', '2502', '3']
  mocks.athena.on(StartQueryExecutionCommand).callsFake(() => {
    const i = mocks.athena.commandCalls(StartQueryExecutionCommand).length - 1
    return { ...metadata, QueryExecutionId: `q-${i}` }
  })
  const polled = new Set<string>()
  mocks.athena.on(GetQueryExecutionCommand).callsFake((input: { QueryExecutionId: string }) => {
    const first = !polled.has(input.QueryExecutionId)
    polled.add(input.QueryExecutionId)
    return {
      ...metadata,
      QueryExecution: { QueryExecutionId: input.QueryExecutionId, Status: { State: first ? 'RUNNING' : 'SUCCEEDED' } },
    }
  })
  mocks.athena.on(GetQueryResultsCommand).callsFake((input: { QueryExecutionId: string }) => ({
    ...metadata,
    ResultSet: {
      Rows: [
        { Data: [{ VarCharValue: '_col0' }] },
        { Data: [{ VarCharValue: counts[Number(input.QueryExecutionId.slice(2))] }] },
      ],
      ResultSetMetadata: { ColumnInfo: [{ Name: '_col0', Type: 'bigint' }] },
    },
  }))
  return { clients, mocks }
}

const capture = () => {
  const out: string[] = []
  const err: string[] = []
  return {
    out,
    err,
    output: { out: (line: string) => void out.push(line), err: (line: string) => void err.push(line) },
  }
}

const noWait = async () => {}

describe('npm run verify', () => {
  let clients: VerifyClients
  let mocks: ReturnType<typeof setup>['mocks']
  beforeEach(() => {
    ;({ clients, mocks } = setup())
  })

  const verify = async (argv: string[]) => {
    const { out, err, output } = capture()
    const status = await runVerifyCommand(argv, output, () => clients, noWait)
    return { status, out, err }
  }

  it('reads the outputs, runs the export for the table, and queries the table, its latest view and its changes view', async () => {
    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices'])

    expect(mocks.cloudFormation.commandCalls(DescribeStacksCommand).map((call) => call.args[0].input)).toEqual([
      { StackName: 'InventoryExport' },
    ])
    const invoke = mocks.lambda.commandCalls(InvokeCommand)[0]?.args[0].input
    expect(invoke?.FunctionName).toBe(OUTPUTS.ExportFunctionName)
    expect(invoke?.InvocationType).toBe('RequestResponse')
    expect(JSON.parse(new TextDecoder().decode(invoke?.Payload as Uint8Array))).toEqual({ tables: ['devices'] })
    expect(mocks.athena.commandCalls(StartQueryExecutionCommand).map((call) => call.args[0].input)).toEqual(
      [
        `SELECT count(*) FROM "devices" WHERE dt = '2026-11-22'`,
        'SELECT count(*) FROM "devices_latest"',
        `SELECT count(*) FROM "devices_changes" WHERE dt = '2026-11-22'`,
      ].map((QueryString) => ({
        QueryString,
        WorkGroup: 'inventory',
        QueryExecutionContext: { Database: 'inventory' },
      })),
    )
    expect(mocks.athena.commandCalls(GetQueryExecutionCommand).map((call) => call.args[0].input)).toEqual(
      ['q-0', 'q-0', 'q-1', 'q-1', 'q-2', 'q-2'].map((QueryExecutionId) => ({ QueryExecutionId })),
    )
    expect(mocks.athena.commandCalls(GetQueryResultsCommand).map((call) => call.args[0].input)).toEqual(
      ['q-0', 'q-1', 'q-2'].map((QueryExecutionId) => ({ QueryExecutionId })),
    )
    expect(out).toEqual([
      'stack: function InventoryExport-ExporterFunction-AbC123, workgroup inventory, database inventory',
      'ok    export devices dt=2026-11-22: 2,502 rows',
      'ok    athena devices dt=2026-11-22: 2,502 rows',
      'ok    athena devices_latest: 2,502 rows',
      'ok    athena devices_changes dt=2026-11-22: 3 rows',
      'verify: all 4 checks passed',
    ])
    expect(status).toBe(0)
  }, 30_000)

  it('takes the stack’s first table when --table is not given', async () => {
    await verify(['--stack', 'InventoryExport'])

    const invoke = mocks.lambda.commandCalls(InvokeCommand)[0]?.args[0].input
    expect(JSON.parse(new TextDecoder().decode(invoke?.Payload as Uint8Array))).toEqual({ tables: ['devices'] })
  }, 30_000)

  it('reports a table the service rejected with its own code and next step, queries nothing, and exits 1', async () => {
    mocks.lambda.on(InvokeCommand).resolves({
      ...metadata,
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: encode({
        errorType: 'RunFailedError',
        errorMessage:
          'export run 2026-11-22T02-00-04Z-7f3a (dt=2026-11-22): 1 of 1 tables failed: devices [AUTH_REJECTED HTTP 401]. The other tables were published; details in s3://b/inventory/_runs/dt=2026-11-22/x.json',
        trace: [],
      }) as never,
    })

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices'])

    expect(out.slice(1)).toEqual([
      'error [AUTH_REJECTED]: export devices: export run 2026-11-22T02-00-04Z-7f3a (dt=2026-11-22): 1 of 1 tables failed: devices [AUTH_REJECTED HTTP 401]. The other tables were published; details in s3://b/inventory/_runs/dt=2026-11-22/x.json',
      "next step: the table failed with AUTH_REJECTED: docs/failure-behaviour.md says what it means; the function's log has the run",
      'verify: 1 of 1 checks failed',
    ])
    expect(mocks.athena.commandCalls(StartQueryExecutionCommand)).toEqual([])
    expect(status).toBe(1)
  }, 30_000)

  it('reports a failed Athena query with ATHENA_QUERY_FAILED and Athena’s reason, and still runs the other queries', async () => {
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-1' }).resolves({
      ...metadata,
      QueryExecution: {
        Status: {
          State: 'FAILED',
          StateChangeReason:
            "TABLE_NOT_FOUND: line 1:15: Table 'awsdatacatalog.inventory.devices_latest' does not exist",
        },
      },
    })

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices'])

    expect(out).toContain(
      "error [ATHENA_QUERY_FAILED]: athena devices_latest: athena devices_latest (query q-1): TABLE_NOT_FOUND: line 1:15: Table 'awsdatacatalog.inventory.devices_latest' does not exist",
    )
    expect(mocks.athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(3)
    expect(out.at(-1)).toBe('verify: 1 of 4 checks failed')
    expect(status).toBe(1)
  }, 30_000)

  it('passes a table without a key, whose changes view does not exist by design', async () => {
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-2' }).resolves({
      ...metadata,
      QueryExecution: {
        Status: {
          State: 'FAILED',
          StateChangeReason: "TABLE_NOT_FOUND: Table 'awsdatacatalog.inventory.users_changes' does not exist",
        },
      },
    })

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices'])

    expect(out).toContain(
      'ok    athena devices_changes dt=2026-11-22: no such view: the table has no key (tables[].key)',
    )
    expect(status).toBe(0)
  }, 30_000)

  it('fails with VERIFY_MISMATCH when Athena counts other rows than the export published', async () => {
    mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-1' }).resolves({
      ...metadata,
      ResultSet: { Rows: [{ Data: [{ VarCharValue: '_col0' }] }, { Data: [{ VarCharValue: '2400' }] }] },
    })

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices'])

    expect(out).toContain(
      'error [VERIFY_MISMATCH]: athena devices_latest: athena devices_latest: expected 2,502 rows, Athena answered 2,400 rows',
    )
    expect(status).toBe(1)
  }, 30_000)

  it('with --no-invoke reads the table’s latest outcome from the run index instead of running the export', async () => {
    mocks.s3.on(GetObjectCommand).resolves({
      ...metadata,
      Body: {
        transformToString: async () =>
          JSON.stringify({
            table: 'devices',
            tableId: '1001',
            status: 'succeeded',
            runId: '2026-11-22T02-00-04Z-7f3a',
            exportDate: '2026-11-22',
            finishedAt: '2026-11-22T02:00:31Z',
            runRecord: '_runs/dt=2026-11-22/2026-11-22T02-00-04Z-7f3a.json',
            rows: 2502,
          }),
      } as never,
    })

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices', '--no-invoke'])

    expect(mocks.lambda.commandCalls(InvokeCommand)).toEqual([])
    expect(mocks.s3.commandCalls(GetObjectCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: OUTPUTS.WarehouseBucketName, Key: 'inventory/_runs/latest/devices.json' },
    ])
    expect(out[1]).toBe('ok    latest run of devices dt=2026-11-22: 2,502 rows (run 2026-11-22T02-00-04Z-7f3a)')
    expect(status).toBe(0)
  }, 30_000)

  it('with --no-invoke reports a table no run has exported yet', async () => {
    mocks.s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'The specified key does not exist.', ...metadata }))

    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'devices', '--no-invoke'])

    expect(out[1]).toMatch(/^error \[INTERNAL\]: latest run of devices: .*no run has finished yet$/)
    expect(status).toBe(1)
  }, 30_000)

  it('refuses a table the stack does not export, naming its tables', async () => {
    const { status, out } = await verify(['--stack', 'InventoryExport', '--table', 'laptops'])

    expect(out[1]).toBe(
      'error [STACK_OUTPUT_MISSING]: table laptops: stack InventoryExport has no output table laptops (its tables: devices, users)',
    )
    expect(mocks.lambda.commandCalls(InvokeCommand)).toEqual([])
    expect(status).toBe(1)
  }, 30_000)
})

describe('npm run verify when AWS cannot be used', () => {
  // Every CloudFormation client, so the command's own (built from --region) answers as AWS would.
  const fails = async (error: Error) => {
    const cloudFormation = mockClient(CloudFormationClient)
    cloudFormation.on(DescribeStacksCommand).rejects(error)
    const { out, err, output } = capture()
    try {
      const status = await main(['verify', '--stack', 'InventoryExport', '--region', REGION], output)
      return { status, out, err }
    } finally {
      cloudFormation.restore()
    }
  }

  it.each([
    [
      'a missing stack',
      new CloudFormationServiceException({
        name: 'ValidationError',
        $fault: 'client',
        message: 'Stack with id InventoryExport does not exist',
        ...metadata,
      }),
      /^error \[STACK_NOT_FOUND\]: stack InventoryExport does not exist in eu-west-1$/,
    ],
    [
      'another account’s credentials',
      new CloudFormationServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        message: 'User: arn:aws:iam::999999999999:user/x is not authorized to perform: cloudformation:DescribeStacks',
        ...metadata,
      }),
      /^error \[AWS_UNAVAILABLE\]: cannot read stack InventoryExport in eu-west-1: AccessDenied: User: arn:aws:iam::999999999999:user\/x is not authorized/,
    ],
    [
      'an unreachable endpoint',
      Object.assign(new Error('getaddrinfo ENOTFOUND cloudformation.eu-west-1.amazonaws.com'), {
        name: 'Error',
        code: 'ENOTFOUND',
      }),
      /^error \[AWS_UNAVAILABLE\]: cannot read stack InventoryExport in eu-west-1: Error: getaddrinfo ENOTFOUND/,
    ],
  ])('fails on %s with one coded line and a next step, no stack trace', async (_what, error, line) => {
    const { status, out, err } = await fails(error)

    expect(out).toEqual([])
    expect(err).toHaveLength(2)
    expect(err[0]).toMatch(line)
    expect(err[1]).toMatch(/^next step: /)
    expect(err.join('\n')).not.toMatch(/\n\s+at /)
    expect(status).toBe(1)
  })
})

describe('npm run verify -- --help', () => {
  it('documents every flag the command reads', async () => {
    const { out, output } = capture()
    const status = await runVerifyCommand(['--help'], output, () => setup().clients)

    expect(out).toEqual([VERIFY_USAGE])
    for (const flag of ['--stack NAME', '--table NAME', '--no-invoke', '--region REGION', '-h, --help'])
      expect(VERIFY_USAGE).toContain(flag)
    expect(status).toBe(0)
  })

  it('refuses to run without --stack, as bad usage (exit 2)', async () => {
    const { err, output } = capture()

    expect(await main(['verify'], output)).toBe(2)
    expect(err).toEqual([
      'error [USAGE_INVALID]: --stack NAME is required',
      'next step: run with --help for the list of flags',
    ])
  })
})
