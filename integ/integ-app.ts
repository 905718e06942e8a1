/**
 * The integration test's app: the stand-in service and the exporter stack, and the assertions integ-runner runs
 * against them once deployed. Shared by integ.export.ts (what integ-runner synthesizes) and the snapshot test.
 *
 * The steps, each after the one before:
 *  1. the exporter's secret gets the stand-in's token and URL, as an operator fills it after a deploy;
 *  2. a run for FIRST_DATE, then the stand-in moves to SECOND_DATE and a run for SECOND_DATE: both succeed;
 *  3. Athena answers the devices table's row count, `devices_latest` and `devices_changes`;
 *  4. the stand-in stops accepting the token and a run for SECOND_DATE fails the tables with AUTH_REJECTED;
 *  5. Athena still answers SECOND_DATE's row count: the failed run left the data as it was.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ExpectedResult, type IApiCall, IntegTest, InvocationType, Match } from '@aws-cdk/integ-tests-alpha'
import { type App, Duration, Fn } from 'aws-cdk-lib'
import { DemoTableId } from '../emulator/tables.ts'
import { PROJECT_ROOT } from '../infra/constructs/exporter.ts'
import { parseDeployConfig } from '../infra/deployment-config.ts'
import { ExportStack } from '../infra/export-stack.ts'
import { DEVICE_ROWS, deviceChanges, FIRST_DATE, rowCount, SECOND_DATE } from './expected.ts'
import { StandInStack } from './stand-in/stand-in.ts'

/** The test configuration: devices (keyed, changes from day to day) and users (no key). */
export const INTEG_CONFIG_FILE = join(PROJECT_ROOT, 'integ/export-config.json')

const QUERY_TIMEOUT = Duration.minutes(3)

/**
 * The feature flags of cdk.json, as `cdk deploy` gives them to infra/app.ts: the test deploys what a deployment
 * deploys, whichever runner synthesizes it (integ-runner passes its own defaults otherwise).
 */
export const integContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context

export interface IntegApp {
  readonly standIn: StandInStack
  readonly exporter: ExportStack
  readonly test: IntegTest
}

/** Adds both stacks and the test case with its assertions to `app`. */
export const addIntegTest = (app: App): IntegApp => {
  const config = parseDeployConfig(JSON.parse(readFileSync(INTEG_CONFIG_FILE, 'utf8')), INTEG_CONFIG_FILE)
  const standIn = new StandInStack(app, 'InventoryExportIntegStandIn', { day: FIRST_DATE, deviceRows: DEVICE_ROWS })
  const exporter = new ExportStack(app, config.deployment.stackName, { config, disposable: true })
  const test = new IntegTest(app, 'InventoryExportIntegTest', {
    testCases: [standIn, exporter],
    cdkCommandOptions: { destroy: { args: { force: true } } },
    regions: ['eu-west-1'],
    // No update workflow (deploy the committed snapshot, then this code): the snapshot then holds no function
    // bundles, only templates and manifests, and one run deploys once.
    stackUpdateWorkflow: false,
  })
  const { assertions } = test
  const functionName = exporter.exporter.function.functionName
  const database = exporter.warehouse.databaseName
  const workgroup = exporter.warehouse.workgroupName

  // 1. The token and the stand-in's URL in the exporter's secret, as JSON {"token", "baseUrl"}.
  const token = assertions.awsApiCall('SecretsManager', 'getSecretValue', { SecretId: standIn.token.secretArn })
  const fillSecret = assertions.awsApiCall('SecretsManager', 'putSecretValue', {
    SecretId: exporter.exporter.secret.secretArn,
    SecretString: Fn.join('', ['{"token":"', token.getAttString('SecretString'), '","baseUrl":"', standIn.url, '"}']),
  })

  const run = (exportDate: string): IApiCall =>
    assertions.invokeFunction({
      functionName,
      invocationType: InvocationType.REQUEST_RESPONSE,
      payload: JSON.stringify({ exportDate }),
    })
  const runSucceeds = (exportDate: string): IApiCall => {
    const call = run(exportDate)
    call.expect(ExpectedResult.objectLike({ StatusCode: 200, Payload: { status: 'succeeded', exportDate } }))
    return call
  }
  const moveStandInTo = (day: string): IApiCall[] => {
    const update = assertions.awsApiCall('Lambda', 'updateFunctionConfiguration', {
      FunctionName: standIn.function.functionName,
      Environment: { Variables: standIn.variablesOn(day, DEVICE_ROWS) },
    })
    const settled = assertions
      .awsApiCall('Lambda', 'getFunctionConfiguration', { FunctionName: standIn.function.functionName })
      .expect(ExpectedResult.objectLike({ LastUpdateStatus: 'Successful' }))
      .waitForAssertions({ totalTimeout: Duration.minutes(2), interval: Duration.seconds(5) })
    return [update, settled]
  }
  const query = (sql: string, rows: string[][]): IApiCall[] => {
    const start = assertions.awsApiCall('Athena', 'startQueryExecution', {
      QueryString: sql,
      WorkGroup: workgroup,
      QueryExecutionContext: { Database: database },
    })
    const id = start.getAttString('QueryExecutionId')
    const done = assertions
      .awsApiCall('Athena', 'getQueryExecution', { QueryExecutionId: id })
      .expect(ExpectedResult.objectLike({ QueryExecution: { Status: { State: 'SUCCEEDED' } } }))
      .waitForAssertions({ totalTimeout: QUERY_TIMEOUT, interval: Duration.seconds(5) })
    const results = assertions.awsApiCall('Athena', 'getQueryResults', { QueryExecutionId: id }).expect(
      ExpectedResult.objectLike({
        ResultSet: { Rows: rows.map((cells) => ({ Data: cells.map((value) => ({ VarCharValue: value })) })) },
      }),
    )
    return [start, done, results]
  }
  const countOn = (date: string): IApiCall[] =>
    query(`SELECT count(*) AS n FROM devices WHERE dt = '${date}'`, [
      ['n'],
      [String(rowCount(date, DemoTableId.DEVICES))],
    ])

  const changes = deviceChanges()
  // 4. The stand-in accepts another token from now on: the exporter's token is a wrong one.
  const rotate = assertions.awsApiCall('SecretsManager', 'putSecretValue', {
    SecretId: standIn.token.secretArn,
    SecretString: 'integ0test0rejects0this0exporter0token0',
  })
  const failed = run(SECOND_DATE)
  failed.expect(
    ExpectedResult.objectLike({
      FunctionError: 'Unhandled',
      Payload: Match.objectLike({ errorType: 'RunFailedError', errorMessage: Match.stringLikeRegexp('AUTH_REJECTED') }),
    }),
  )

  const steps: IApiCall[] = [
    token,
    fillSecret,
    runSucceeds(FIRST_DATE),
    ...moveStandInTo(SECOND_DATE),
    runSucceeds(SECOND_DATE),
    ...countOn(FIRST_DATE),
    ...countOn(SECOND_DATE),
    ...query('SELECT count(*) AS n FROM devices_latest', [['n'], [String(rowCount(SECOND_DATE, DemoTableId.DEVICES))]]),
    ...query(`SELECT count(*) AS n FROM users WHERE dt = '${SECOND_DATE}'`, [
      ['n'],
      [String(rowCount(SECOND_DATE, DemoTableId.USERS))],
    ]),
    ...query(`SELECT change, count(*) AS n FROM devices_changes WHERE dt = '${SECOND_DATE}' GROUP BY 1 ORDER BY 1`, [
      ['change', 'n'],
      ['added', String(changes.added)],
      ['changed', String(changes.changed)],
      ['removed', String(changes.removed)],
    ]),
    rotate,
    failed,
    ...countOn(SECOND_DATE),
  ]
  steps.reduce((previous, next) => previous.next(next))
  grantQueries(steps, exporter)
  return { standIn, exporter, test }
}

/**
 * Athena runs the queries with the caller's rights: the assertion provider must read the catalog and the data and
 * write results, as an analyst with the stack's analyst policy would.
 */
const grantQueries = (steps: readonly IApiCall[], exporter: ExportStack): void => {
  const bucket = exporter.warehouse.bucket.bucketArn
  // Every call of the test shares one provider function; its role gets these once.
  steps[0]?.provider.addToRolePolicy({
    Effect: 'Allow',
    Action: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetTables', 'glue:GetPartition', 'glue:GetPartitions'],
    Resource: ['*'],
  })
  steps[0]?.provider.addToRolePolicy({
    Effect: 'Allow',
    Action: ['s3:GetObject', 's3:PutObject', 's3:ListBucket', 's3:GetBucketLocation', 's3:AbortMultipartUpload'],
    Resource: [bucket, `${bucket}/*`],
  })
}
