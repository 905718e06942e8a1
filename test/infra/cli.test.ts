import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROJECT_ROOT, sampleWith } from './synth.ts'

const CLI_TIMEOUT_MS = 180_000
const dir = mkdtempSync(join(tmpdir(), 'inventory-cli-'))

/** `npx cdk synth` offline: no notices, no version check, no telemetry. */
const cdkSynth = (config: string, output: string) => {
  const started = Date.now()
  const result = spawnSync(
    'npx',
    ['cdk', 'synth', '-q', '--no-notices', '-c', `config=${config}`, '--output', output],
    {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: CLI_TIMEOUT_MS,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', CDK_DISABLE_CLI_TELEMETRY: 'true' },
    },
  )
  return { ...result, seconds: (Date.now() - started) / 1000 }
}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('npx cdk synth with the sample configuration', () => {
  const output = join(dir, 'sample.out')
  let result: ReturnType<typeof cdkSynth>
  beforeAll(() => {
    result = cdkSynth('config/sample.json', output)
    console.info(`cdk synth of the sample took ${result.seconds.toFixed(1)} s`)
  }, CLI_TIMEOUT_MS)

  it('exits 0 offline', () => {
    expect(result.stderr).not.toMatch(/AwsSolutions-/)
    expect(result.status, result.stderr).toBe(0)
    expect(existsSync(join(output, 'InventoryExport.template.json'))).toBe(true)
  })

  it('leaves the bundled ESM handler and its configuration, without a source map, in the asset folder', () => {
    const template = JSON.parse(readFileSync(join(output, 'InventoryExport.template.json'), 'utf8'))
    const fn = Object.values(
      template.Resources as Record<string, { Type: string; Metadata?: Record<string, string> }>,
    ).find((resource) => resource.Type === 'AWS::Lambda::Function')
    const assetDir = join(output, fn?.Metadata?.['aws:asset:path'] ?? 'missing')
    expect(readdirSync(assetDir).sort()).toEqual(['export-config.json', 'index.mjs'])
    expect(readFileSync(join(assetDir, 'index.mjs'), 'utf8')).toMatch(/createRequire/)
  })
})

describe('npx cdk synth with a bad configuration', () => {
  it(
    'fails and names the bad field',
    () => {
      const file = join(dir, 'bad.json')
      writeFileSync(file, JSON.stringify(sampleWith({ source: { baseUrl: 'http://inventory.example.com' } })))
      const result = cdkSynth(file, join(dir, 'bad.out'))
      expect(result.status).not.toBe(0)
      expect(result.stderr).toContain(`invalid ${file}:`)
      expect(result.stderr).toMatch(/^error \[CONFIG_INVALID\]: invalid .*: source\.baseUrl: must use https/m)
    },
    CLI_TIMEOUT_MS,
  )
})
