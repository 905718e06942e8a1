import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { glueTableCatalog } from '../../functions/export/catalog/glue.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { glueCatalogStandIn } from '../support/aws-mocks.ts'
import { tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

/** The JSON Athena (Trino) reads from a registered view, decoded by hand: what Trino's view codec would see. */
const embeddedView = (text: string | undefined) => {
  const encoded = /^\/\* Presto View: ([A-Za-z0-9+/=]+) \*\/$/.exec(text ?? '')?.[1]
  expect(encoded).toBeDefined()
  return JSON.parse(Buffer.from(encoded!, 'base64').toString('utf8')) as Record<string, unknown>
}

describe('views as Athena writes them', () => {
  it('registers each view with exactly the fields of Trino’s view codec, run with the invoker’s rights', async () => {
    const source = new MemorySource()
    source.set('3001', { id: '3001', title: 'Assets', columns: ['Asset ID', 'Hostname'], rows: () => [['1', 'a']] })
    const { client, tables } = glueCatalogStandIn()
    const store = new FolderWarehouseStore(await tempDir())
    // Two dates, so the keyed table has its changes view as well as its latest view.
    for (const exportDate of ['2026-04-01', '2026-04-02']) {
      const record = await runExport(
        parseConfigWithoutSource({ tables: [{ id: '3001', name: 'assets', key: ['asset_id'] }] }),
        {
          source,
          store,
          telemetry: silentTelemetry,
          spoolDirectory: os.tmpdir(),
          catalog: glueTableCatalog(client, 'inventory', 's3://bucket/inventory'),
        },
        { exportDate },
      )
      expect(record.tables.map((t) => t.error)).toEqual([undefined])
    }
    const views = [...tables.values()].filter((t) => t.TableType === 'VIRTUAL_VIEW')
    expect(views.map((v) => v.Name).sort()).toEqual(['assets_changes', 'assets_latest'])
    for (const view of views) {
      const json = embeddedView(view.ViewOriginalText)
      // Trino's ConnectorViewDefinition: these and nothing else, so its codec neither fails nor drops a field.
      expect(Object.keys(json).sort()).toEqual(['catalog', 'columns', 'originalSql', 'runAsInvoker', 'schema'])
      expect(json.runAsInvoker).toBe(true)
      // An invoker view carries no owner: Trino refuses one ("owner cannot be present with runAsInvoker").
      expect(json).not.toHaveProperty('owner')
      expect(json.catalog).toBe('awsdatacatalog')
      expect(json.schema).toBe('inventory')
      expect(json.originalSql).toMatch(/^(SELECT|WITH) .*(FROM|JOIN) "inventory"\."assets" /s)
      const columns = json.columns as { name: string; type: string }[]
      expect(columns.map((c) => Object.keys(c).sort())).toEqual(columns.map(() => ['name', 'type']))
      expect(columns.map((c) => c.name)).toEqual(view.StorageDescriptor?.Columns?.map((c) => c.Name))
      expect(view.Owner).toBe('inventory-export')
      expect(view.Parameters).toEqual({ presto_view: 'true', comment: 'Presto View' })
    }
  })
})
