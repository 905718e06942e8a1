/**
 * Iceberg commits on AWS, offline: the metadata pointer is the Glue table's `metadata_location`, moved with
 * UpdateTable and the VersionId read, as Iceberg's GlueCatalog moves it. Against the harness: the exporter role's
 * synthesized policies decide every S3 and Glue request, Glue's API model checks each one, and the endpoint
 * refuses an UpdateTable at a stale VersionId with ConcurrentModificationException, as Glue does.
 */
import path from 'node:path'
import { CreateTableCommand, GlueClient, UpdateTableCommand } from '@aws-sdk/client-glue'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { glueMetadataPointer } from '../../functions/export/catalog/glue-iceberg.ts'
import { LINEAGE_COLUMNS } from '../../functions/export/core/lineage.ts'
import { commitPartition, readCurrentMetadata } from '../../functions/export/iceberg/snapshot-commit.ts'
import { createHandler } from '../../functions/export/lambda/handler.ts'
import { layoutOf } from '../../functions/export/path/layout-of.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import { readTableSchema } from '../../functions/export/schema/registry.ts'
import { storedDates } from '../../functions/export/schema/retention.ts'
import { synthesize } from '../infra/synth.ts'
import { tempDir } from '../support/cli.ts'
import { captureOutput, lambdaContext } from '../support/emf.ts'
import { S3RVER_CREDENTIALS } from '../support/s3rver.ts'
import { startAwsHarness } from './harness.ts'
import { Authorizer } from './iam.ts'
import { functionEnvironment, LOCAL_REGION, rolePolicies, type SynthesizedTemplate } from './role-policy.ts'

const NAMES = {
  bucket: 'warehouse-iceberg',
  secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf',
}
const DATES = ['2026-10-01', '2026-10-02']
const RACED = ['2026-10-03', '2026-10-04']
const DATABASE = 'inventory'

let emulator: RunningEmulator
let template: SynthesizedTemplate
let runtimeConfig: Record<string, unknown>
let output: ReturnType<typeof captureOutput> | undefined

beforeAll(async () => {
  const synthesized = synthesize({
    source: { baseUrl: 'https://inventory.example.com' },
    tables: [{ id: '1001', name: 'devices', tableFormat: 'iceberg' }],
    warehouse: { prefix: 'inventory', glueDatabase: DATABASE },
  })
  template = synthesized.template.toJSON() as SynthesizedTemplate
  runtimeConfig = synthesized.stack.exporter.runtimeConfig as typeof runtimeConfig
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 20, software: 5, users: 5 } }) })
  output = captureOutput()
}, 120_000)
afterAll(async () => {
  output?.restore()
  await emulator?.close()
})

describe('an Iceberg commit through Glue, as the exporter role may', () => {
  it('turns the Hive table into an Iceberg one, and lands two dates committed at once', async () => {
    const aws = await startAwsHarness({
      template,
      names: NAMES,
      secretValue: JSON.stringify({ token: DEMO_TOKEN, baseUrl: emulator.baseUrl }),
    })
    try {
      const clients = { region: LOCAL_REGION, endpoint: aws.json.endpoint, credentials: S3RVER_CREDENTIALS }
      const glue = new GlueClient(clients)
      const handler = createHandler({
        environment: functionEnvironment(template, NAMES, 'ExporterFunction', runtimeConfig),
        s3Client: aws.s3.client,
        secretsClient: new SecretsManagerClient(clients),
        glueClient: glue,
        spoolDirectory: path.join(await tempDir('iceberg-glue-'), 'spool'),
      })
      // A Hive table of the name is there first, as a table deployed before it moved to Iceberg would be.
      await glue.send(
        new CreateTableCommand({
          DatabaseName: DATABASE,
          TableInput: {
            Name: 'devices',
            TableType: 'EXTERNAL_TABLE',
            Parameters: { EXTERNAL: 'TRUE', 'projection.enabled': 'true' },
            StorageDescriptor: {
              Location: `s3://${NAMES.bucket}/inventory/devices/`,
              Columns: [{ Name: 'x', Type: 'string' }],
            },
            PartitionKeys: [{ Name: 'dt', Type: 'string' }],
          },
        }),
      )
      for (const date of DATES) {
        emulator.upstream.setDate(date)
        expect((await handler({ tables: ['devices'], exportDate: date }, lambdaContext())).status).toBe('succeeded')
      }
      const store = new S3WarehouseStore(aws.s3.client, NAMES.bucket, 'inventory')
      const root = `s3://${NAMES.bucket}/inventory`
      // Both writers have read the table, and checked it again, before either updates it: the second update
      // names a VersionId that the first moved on, and Glue refuses it; that writer commits again on top.
      let arrived = 0
      let bothArrived: () => void = () => undefined
      const both = new Promise<void>((resolve) => {
        bothArrived = resolve
      })
      const gate = {
        send: async (command: unknown) => {
          if (command instanceof UpdateTableCommand && arrived < 2) {
            if (++arrived === 2) bothArrived()
            await both
          }
          return glue.send(command as never)
        },
      } as unknown as GlueClient
      const pointer = glueMetadataPointer(gate, DATABASE, root)
      const inner = pointer
      const location = { table: 'devices', key: 'devices', uri: `${root}/devices` }
      const registry = (await readTableSchema(store, 'devices'))!
      const columns = [...registry.columns.map(({ name, type }) => ({ name, type })), ...LINEAGE_COLUMNS]
      const exported = (await store.listKeys('devices/data/')).filter((key) => key.endsWith('.parquet'))
      expect(exported.map((key) => key.split('/')[2])).toEqual(DATES.map((dt) => `dt=${dt}`))
      const bytes = (await store.getObject(exported[0]!))!
      await Promise.all(
        RACED.map(async (dt) => {
          const key = `devices/data/dt=${dt}/raced.parquet`
          await store.putObject(key, bytes, 'application/vnd.apache.parquet')
          const file = { file_path: `${root}/${key}`, record_count: 20, file_size_in_bytes: bytes.length, dt }
          await commitPartition(store, pointer, location, { exportDate: dt, files: [file], columns })
        }),
      )
      const glueCalls = aws.json.requests.filter((r) => r.target === 'AWSGlue.UpdateTable' && r.body.Name === undefined)
      const updates = glueCalls.filter((r) => r.body.VersionId !== undefined)
      expect(updates.map((r) => [r.body.VersionId, r.status, r.reply.__type ?? 'ok'])).toEqual([
        // The first export's commit turns the Hive table into the Iceberg one, the second's moves it on.
        ['1', 200, 'ok'],
        ['2', 200, 'ok'],
        // The two commits started together: the second names the version the first moved on, and commits again.
        ['3', 200, 'ok'],
        ['3', 400, 'ConcurrentModificationException'],
        ['4', 200, 'ok'],
      ])
      expect(updates.every((r) => (r.body as { SkipArchive?: boolean }).SkipArchive === true)).toBe(true)
      expect(aws.authorizer.decisions.filter((d) => !d.allowed)).toEqual([])
      const table = aws.json.glueTables.get(`${DATABASE}.devices`)!
      const current = (await readCurrentMetadata(store, inner, location))!
      expect(table.Parameters).toEqual({
        table_type: 'ICEBERG',
        metadata_location: `${root}/${current.metadataKey}`,
        previous_metadata_location: `${root}/${current.metadata['metadata-log'].at(-1)?.['metadata-file'].slice(root.length + 1)}`,
      })
      expect(table.PartitionKeys).toBeUndefined()
      expect(current.metadata.snapshots.map((s) => s.summary['added-records'])).toEqual(['20', '20', '20', '20'])
      // The dates the Iceberg table has, read through Glue's pointer: the raced ones wrote no dates relation.
      const catalog = { publish: async () => [], check: () => undefined, metadataPointer: inner }
      const layout = layoutOf({ name: 'devices', tableFormat: 'iceberg' }, store, catalog)
      expect(await storedDates(store, 'devices', layout)).toEqual([...DATES, ...RACED])
    } finally {
      await aws.close()
    }
  }, 120_000)

  it("grants deletes on the Iceberg table's own data and metadata folders alone", async () => {
    const synthesized = synthesize({
      source: { baseUrl: 'https://inventory.example.com' },
      tables: [
        { id: '1001', name: 'devices', tableFormat: 'iceberg' },
        { id: '1002', name: 'users' },
      ],
      warehouse: { prefix: 'inventory', glueDatabase: DATABASE },
    })
    const role = new Authorizer(
      rolePolicies(synthesized.template.toJSON() as SynthesizedTemplate, 'ExporterRole', NAMES),
    )
    const deletes = async (key: string) =>
      (await role.decide({ action: 's3:DeleteObject', resource: `arn:aws:s3:::${NAMES.bucket}/inventory/${key}` }))
        .allowed
    const keys = {
      'devices/data/dt=2026-10-01/run.parquet': true,
      'devices/metadata/00002-x.metadata.json': true,
      'devices/metadata/snap-1-1-x.avro': true,
      // Its Hive objects, which a conversion adopted as data files and expiry removes once replaced.
      'devices/dt=2026-10-01/data.parquet': true,
      'users/data/dt=2026-10-01/run.parquet': false,
      'users/dt=2026-10-01/data.parquet': false,
      '_runs/dt=2026-10-01/run.json': false,
      '_schemas/devices.json': false,
      '_iceberg/devices.json': false,
    }
    const decided = Object.fromEntries(await Promise.all(Object.keys(keys).map(async (k) => [k, await deletes(k)])))
    expect(decided).toEqual(keys)
  }, 120_000)
})
