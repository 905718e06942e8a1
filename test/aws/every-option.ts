/** Configurations whose synthesized templates the AWS-rules tests check: the sample and one using every option. */
import { sampleConfigInput } from '../infra/synth.ts'

/** Every key of the configuration set to a non-default value; the stack then uses an existing secret and bucket. */
export const everyOptionInput = (): Record<string, unknown> => {
  const sample = sampleConfigInput()
  return {
    ...sample,
    source: { baseUrl: 'http://inventory.internal.example.com', allowInsecureHttp: true },
    tables: [
      {
        id: '1001',
        name: 'devices',
        format: 'xlsx',
        encoding: 'windows-1252',
        invalidBytes: 'replace',
        delimiter: ';',
        shortRows: 'pad',
        columnTypes: { serial_number: 'string' },
        archiveRaw: true,
        guards: { holdBelow: 0.2, warnBelow: 0.6, columnsRemoved: 'hold', columnsAdded: false },
        schedule: { expression: 'cron(0 6 ? * MON-FRI *)', timeZone: 'Europe/Berlin', periodHours: 24 },
        memoryMb: 3538,
        key: ['device_id'],
      },
      { id: 'sw-1002', guards: false, schedule: { expression: 'rate(6 hours)' } },
    ],
    export: {
      concurrency: 4,
      retry: {
        maxAttempts: 5,
        baseDelayMs: 500,
        maxDelayMs: 20_000,
        maxRetryAfterSeconds: 60,
        totalBudgetSeconds: 300,
      },
      timeouts: { connectSeconds: 5, idleSeconds: 60, tableSeconds: 1800, tokenCheckSeconds: 120 },
      deadlineMarginSeconds: 90,
      guards: { holdBelow: 0.05, warnBelow: 0.4, columnsRemoved: 'warn', columnsAdded: 'warn' },
    },
    limits: { maxColumns: 500, maxRecordBytes: 8 * 1024 * 1024, maxFieldBytes: 1024 * 1024 },
    warehouse: { prefix: 'lake/inventory', glueDatabase: 'asset_lake' },
    deployment: {
      stackName: 'InventoryExport-Prod',
      schedule: {
        expression: 'cron(30 1 * * ? *)',
        timeZone: 'Europe/Berlin',
        periodHours: 24,
        flexibleWindowMinutes: 0,
      },
      secret: {
        nameOrArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:inventory/api-token-AbCdEf',
        kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555',
        retainOnDelete: false,
      },
      bucket: {
        name: 'acme-data-lake',
        kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/66666666-7777-8888-9999-000000000000',
      },
      athena: {
        workgroup: 'asset-analysts',
        bytesScannedCutoffPerQuery: 1024 ** 3,
        tableQueries: true,
        namedQueries: [
          {
            name: 'devices: latest inventory by operating system',
            description: 'Devices in the newest export, counted per operating system.',
            sql: "SELECT coalesce(operating_system, '(unknown)') AS operating_system, count(*) AS devices\nFROM devices_latest\nGROUP BY 1\nORDER BY devices DESC",
          },
          { name: 'devices: all', sql: 'SELECT * FROM devices_latest' },
        ],
      },
      alarms: { failedRunsToAlarm: 1, evaluationRuns: 2, staleAfterPeriods: 3, emails: ['oncall@example.com'] },
      vpc: {
        vpcId: 'vpc-0abc1234567890def',
        availabilityZones: ['eu-west-1a', 'eu-west-1b'],
        subnetIds: ['subnet-0aaaaaaaaaaaaaaaa', 'subnet-0bbbbbbbbbbbbbbbb'],
        securityGroupIds: ['sg-0123456789abcdef0'],
      },
      lambda: { memoryMb: 2048, timeoutSeconds: 600, ephemeralStorageMb: 4096, sourceMaps: true },
      historyOperations: { enabled: true, maxConcurrency: 8 },
    },
  }
}
