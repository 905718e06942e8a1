import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { App } from 'aws-cdk-lib'
import { afterAll, describe, expect, it } from 'vitest'
import { parseExportConfig } from '../../../functions/export/core/config.ts'
import { ConfigError } from '../../../functions/export/core/errors.ts'
import { addExportStack, loadExportConfig } from '../../../infra/app.ts'
import { parseDeployConfig } from '../../../infra/deployment-config.ts'
import {
  cdkContext,
  SAMPLE_CONFIG_FILE,
  SKIP_BUNDLING,
  sampleConfigInput,
  sampleWith,
  scratchDir,
  synthesize,
} from '../../infra/synth.ts'

const dir = mkdtempSync(join(tmpdir(), 'inventory-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const writeConfig = (name: string, content: unknown): string => {
  const file = join(dir, name)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

const deploymentWith = (changes: Record<string, unknown>) => ({
  deployment: { ...(sampleConfigInput().deployment as Record<string, unknown>), ...changes },
})

const configError = (run: () => unknown): ConfigError => {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('the configuration file', () => {
  it('loads the committed sample', () => {
    const config = loadExportConfig(SAMPLE_CONFIG_FILE)
    expect(config.tables.map((t) => t.name)).toEqual(['devices', 'installed_software', 'users'])
    expect(config.deployment.alarms.emails).toEqual(['platform-oncall@example.com'])
  })

  it('fails with the file and field named when the base URL is not https', () => {
    const file = writeConfig('http.json', sampleWith({ source: { baseUrl: 'http://inventory.example.com' } }))
    const error = configError(() => loadExportConfig(file))
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.message).toContain(`invalid ${file}:`)
    expect(error.problems).toEqual([
      expect.objectContaining({ field: 'source.baseUrl', message: expect.stringMatching(/must use https/) }),
    ])
  })

  it('takes export.workerThreads as auto by default or a number of threads, and names it when it is neither', () => {
    expect(loadExportConfig(SAMPLE_CONFIG_FILE).export.workerThreads).toBe('auto')
    const three = writeConfig('three.json', sampleWith({ export: { workerThreads: 3 } }))
    expect(loadExportConfig(three).export.workerThreads).toBe(3)
    for (const [name, value] of [
      ['many.json', 65],
      ['half.json', 1.5],
      ['all.json', 'all'],
    ] as const) {
      const error = configError(() =>
        loadExportConfig(writeConfig(name, sampleWith({ export: { workerThreads: value } }))),
      )
      expect(error.problems).toEqual([expect.objectContaining({ field: 'export.workerThreads' })])
    }
  })

  it('fails naming failedRunsToAlarm when it exceeds evaluationRuns', () => {
    const alarms = { failedRunsToAlarm: 4, evaluationRuns: 3, staleAfterPeriods: 2, emails: [] }
    const file = writeConfig('alarms.json', sampleWith(deploymentWith({ alarms })))
    expect(configError(() => loadExportConfig(file)).message).toContain(
      '- deployment.alarms.failedRunsToAlarm: failedRunsToAlarm must not exceed evaluationRuns',
    )
  })

  it('fails naming a KMS key given for a secret or bucket the stack creates itself, and a key that is not an ARN', () => {
    const key = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'
    const file = writeConfig(
      'kms.json',
      sampleWith(
        deploymentWith({ secret: { kmsKeyArn: key }, bucket: { name: 'acme-lake', kmsKeyArn: 'alias/lake' } }),
      ),
    )
    expect(configError(() => loadExportConfig(file)).problems).toEqual([
      expect.objectContaining({
        field: 'deployment.secret.kmsKeyArn',
        message: expect.stringMatching(/set nameOrArn/),
      }),
      expect.objectContaining({ field: 'deployment.bucket.kmsKeyArn', message: expect.stringMatching(/KMS key ARN/) }),
    ])
  })

  it.each([
    ['cron(0 2 * * *)', 24, 'deployment.schedule.expression', /has 5 fields; EventBridge needs six/],
    [
      'rate(6 hours)',
      24,
      'deployment.schedule.periodHours',
      /is 24, but rate\(6 hours\) runs every 6 hours; set periodHours to 6/,
    ],
    ['cron(0 9 ? * MON *)', 24, 'deployment.schedule.periodHours', /runs every 168 hours/],
  ])(
    'fails naming the schedule when %s does not suit EventBridge or periodHours %s',
    (expression, periodHours, field, message) => {
      const file = writeConfig('schedule.json', sampleWith(deploymentWith({ schedule: { expression, periodHours } })))
      expect(configError(() => loadExportConfig(file)).problems).toEqual([
        { field, message: expect.stringMatching(message) },
      ])
    },
  )

  it('rejects a sheet on a CSV table, where it would do nothing, and keeps it on a workbook', () => {
    const input = sampleConfigInput()
    input.tables = [
      { id: '1001', sheet: 'Devices' },
      { id: '1002', format: 'xlsx', sheet: 'Devices' },
    ]
    expect(configError(() => loadExportConfig(writeConfig('sheet.json', input))).problems).toEqual([
      {
        field: 'tables[0].sheet',
        message: 'names a worksheet, which only a workbook has: set "format": "xlsx", or remove it',
      },
    ])
  })

  it('takes the Iceberg layout on a table or as the warehouse default, a table setting first', () => {
    const input = {
      ...sampleConfigInput(),
      warehouse: { tableFormat: 'iceberg' },
      tables: [{ id: '1001' }, { id: '1002', tableFormat: 'hive' }],
    }
    const tables = loadExportConfig(writeConfig('iceberg.json', input)).tables
    expect(tables.map((table) => table.tableFormat)).toEqual(['iceberg', 'hive'])
    input.tables = [{ id: '1001', tableFormat: 'icebreg' } as never]
    expect(configError(() => loadExportConfig(writeConfig('icebreg.json', input))).problems).toEqual([
      { field: 'tables[0].tableFormat', message: expect.stringContaining('"iceberg"') },
    ])
  })

  it('fails naming every bad field at once', () => {
    const file = writeConfig('many.json', { ...sampleWith(deploymentWith({ lambda: { memoryMb: 64 } })), tables: [] })
    expect(configError(() => loadExportConfig(file)).problems.map((p) => p.field)).toEqual([
      'tables',
      'deployment.lambda.memoryMb',
    ])
  })

  it.each([
    [
      'tables[0].colummTypes',
      (input: Record<string, unknown>) => {
        input.tables = [{ id: '1001', colummTypes: { serial_number: 'string' } }]
      },
      'did you mean "columnTypes"?',
    ],
    [
      'deployment.unknownKey',
      (input: Record<string, unknown>) => {
        input.deployment = { unknownKey: true }
      },
      'known here: stackName, schedule, secret, pseudonymizationSecret, bucket',
    ],
    [
      'deployment.schedule.expresion',
      (input: Record<string, unknown>) => {
        input.deployment = { schedule: { expresion: 'rate(1 day)' } }
      },
      'did you mean "expression"?',
    ],
    [
      'source.baseURL',
      (input: Record<string, unknown>) => {
        input.source = { baseUrl: 'https://inventory.example.com', baseURL: 'https://other.example.com' }
      },
      'did you mean "baseUrl"?',
    ],
    [
      'export.retry.maxAttempt',
      (input: Record<string, unknown>) => {
        input.export = { retry: { maxAttempt: 3 } }
      },
      'did you mean "maxAttempts"?',
    ],
  ])('rejects the unknown key %s, naming its path and the closest known key', (field, change, message) => {
    const input = sampleConfigInput()
    change(input)
    const error = configError(() => loadExportConfig(writeConfig('unknown-key.json', input)))
    expect(error.problems).toEqual([{ field, message: expect.stringContaining(message) }])
  })

  it.each([
    ['is not JSON', '{ "source": ', /is not valid JSON/],
    ['does not exist', undefined, /cannot be read/],
  ])('fails with the file named when it %s', (_what, content, message) => {
    const file = content === undefined ? join(dir, 'missing.json') : writeConfig('broken.json', content)
    const error = configError(() => loadExportConfig(file))
    expect(error.problems).toEqual([{ field: '(file)', message: expect.stringMatching(message) }])
  })

  it('is read from the file named by the "config" context', () => {
    const file = writeConfig('named.json', sampleWith({ warehouse: { prefix: 'from-context', glueDatabase: 'ctx' } }))
    const app = new App({ context: { ...cdkContext(), ...SKIP_BUNDLING, config: file }, outdir: scratchDir() })
    expect(addExportStack(app).config.warehouse.prefix).toBe('from-context')
  })
})

describe('settings the schema cannot check alone', () => {
  it('fail synth naming an unknown time zone', () => {
    const input = sampleWith(
      deploymentWith({ schedule: { expression: 'cron(0 2 * * ? *)', timeZone: 'Mars/Olympus', periodHours: 24 } }),
    )
    expect(() => synthesize(input)).toThrow(
      /deployment\.schedule\.timeZone: must be an IANA time zone such as "Europe\/Berlin"/,
    )
  })

  it('fail synth naming a CA file that does not exist', () => {
    const input = sampleWith({
      source: { baseUrl: 'https://inventory.example.com', caCertificatesFile: 'no/such/ca.pem' },
    })
    expect(() => synthesize(input)).toThrow(/source\.caCertificatesFile: no file at .*no\/such\/ca\.pem/)
  })

  it('fail synth naming a failure window longer than CloudWatch allows', () => {
    const alarms = { failedRunsToAlarm: 2, evaluationRuns: 8, staleAfterPeriods: 2, emails: [] }
    expect(() => synthesize(sampleWith(deploymentWith({ alarms })))).toThrow(
      /deployment\.alarms\.evaluationRuns: evaluationRuns × schedule\.periodHours is 192 hours, more than the 168 hours CloudWatch alarms can look back/,
    )
  })
})

describe('several environments in one account', () => {
  it('derive the Glue database, workgroup, secret and alarm names from deployment.stackName', () => {
    const { stack, template } = synthesize(sampleWith({ deployment: { stackName: 'InventoryExport-Prod' } }))
    expect(stack.stackName).toBe('InventoryExport-Prod')
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'inventory_export_prod' } })
    template.hasResourceProperties('AWS::Athena::WorkGroup', { Name: 'InventoryExport-Prod' })
    template.hasResourceProperties('AWS::SecretsManager::Secret', { Name: 'InventoryExport-Prod/inventory-token' })
    const alarmNames = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (alarm) => (alarm as { Properties: { AlarmName: string } }).Properties.AlarmName,
    )
    expect(alarmNames.length).toBeGreaterThan(0)
    for (const name of alarmNames) expect(name).toMatch(/^InventoryExport-Prod/)
    expect(stack.exporter.runtimeConfig.warehouse.glueDatabase).toBe('inventory_export_prod')
  })

  it('keep names set explicitly, and the historical names for the default stack', () => {
    const explicit = sampleWith({
      deployment: { stackName: 'Staging', athena: { workgroup: 'analysts-staging' } },
      warehouse: { glueDatabase: 'inventory_staging' },
    })
    const { template } = synthesize(explicit)
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'inventory_staging' } })
    template.hasResourceProperties('AWS::Athena::WorkGroup', { Name: 'analysts-staging' })
    const input = sampleConfigInput() as { warehouse: object; deployment: { athena: object } }
    input.warehouse = {}
    input.deployment.athena = {}
    const defaults = synthesize(input).template
    defaults.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'inventory' } })
    defaults.hasResourceProperties('AWS::Athena::WorkGroup', { Name: 'inventory', RecursiveDeleteOption: true })
  })

  it('retain the token secret when the stack is deleted, unless the configuration says otherwise', () => {
    synthesize(sampleConfigInput()).template.hasResource('AWS::SecretsManager::Secret', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    })
    synthesize(sampleWith({ deployment: { secret: { retainOnDelete: false } } })).template.hasResource(
      'AWS::SecretsManager::Secret',
      { DeletionPolicy: 'Delete' },
    )
  })

  it('refuse to synthesize without -c config, instead of deploying the sample', () => {
    const app = new App({ context: { ...cdkContext(), ...SKIP_BUNDLING }, outdir: scratchDir() })
    expect(configError(() => addExportStack(app)).problems).toEqual([
      { field: 'config', message: expect.stringContaining('npx cdk deploy -c config=config/prod.json') },
    ])
  })
})

describe('the runtime schema and the deployment schema that extends it', () => {
  it('let the CLI and the function read the full file, typing only stackName of the deployment section', () => {
    const input = sampleWith(deploymentWith({ stackName: 'InventoryExport-Prod', unknownKey: true }))
    const runtime = parseExportConfig(input, 'runtime')
    expect(runtime.warehouse.glueDatabase).toBe('inventory_export_prod')
    expect(runtime.deployment.stackName).toBe('InventoryExport-Prod')
    expect(runtime.deployment.lambda).toEqual((sampleConfigInput().deployment as { lambda: unknown }).lambda)
  })

  it('leave the deploy-only keys to synth, which rejects an unknown one with its path', () => {
    const input = sampleWith(deploymentWith({ lambda: { memoryMb: 1769, timeoutSecs: 900 } }))
    expect(() => parseExportConfig(input, 'runtime')).not.toThrow()
    expect(configError(() => parseDeployConfig(input, 'stack')).problems).toEqual([
      { field: 'deployment.lambda.timeoutSecs', message: expect.stringContaining('did you mean "timeoutSeconds"?') },
    ])
  })

  it('still check the runtime sections strictly in both', () => {
    const input = sampleWith({ limits: { maxColumn: 10 } })
    for (const parse of [parseExportConfig, parseDeployConfig]) {
      expect(configError(() => parse(input, 'either')).problems).toEqual([
        { field: 'limits.maxColumn', message: expect.stringContaining('did you mean "maxColumns"?') },
      ])
    }
  })
})
