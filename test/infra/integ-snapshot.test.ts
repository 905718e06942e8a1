/**
 * The integration test's snapshot, checked without an account as integ-runner checks it: the three stacks of
 * integ/integ.export.ts synthesized and compared with integ/integ.export.ts.snapshot/. A change to the stack, the
 * stand-in or the assertions shows up as a diff to review; `npx vitest run test/infra/integ-snapshot.test.ts -u`
 * rewrites the snapshot. Asset hashes are replaced by a placeholder: they follow every edit of the functions' code.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { App } from 'aws-cdk-lib'
import { Match, Template } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { addIntegTest, integContext } from '../../integ/integ-app.ts'
import { SKIP_BUNDLING, scratchDir } from './synth.ts'

const SNAPSHOT_DIR = '../../integ/integ.export.ts.snapshot'

/**
 * The template as committed: asset hashes (64 hex digits, in bucket keys) and the assertions' `salt` (the synth
 * time, which integ-tests-alpha adds so that every deployment reruns them) replaced.
 */
const canonicalTemplate = (template: unknown): string =>
  `${JSON.stringify(template, null, 2)
    .replace(/[0-9a-f]{64}/g, '<asset hash>')
    .replace(/"salt": "\d+"/g, '"salt": "<synth time>"')}\n`

const synthesizeIntegApp = () => {
  const app = new App({ context: { ...integContext(), ...SKIP_BUNDLING }, outdir: scratchDir() })
  const integ = addIntegTest(app)
  return { ...integ, assembly: app.synth() }
}

describe('the integration test (integ/integ.export.ts)', () => {
  const { standIn, exporter, test, assembly } = synthesizeIntegApp()
  const stacks = assembly.stacks

  it.each(stacks.map((stack) => [stack.stackName, stack] as const))(
    'synthesizes stack %s as its committed snapshot',
    async (name, stack) => {
      await expect(canonicalTemplate(stack.template)).toMatchFileSnapshot(`${SNAPSHOT_DIR}/${name}.template.json`)
    },
  )

  // Each table's schedule, alarm and named queries live in a nested stack, a template of its own in the assembly.
  const nested = readdirSync(assembly.directory).filter((file) => file.endsWith('.nested.template.json'))

  it('has the nested stacks of the exporter', () => {
    expect(nested.length).toBeGreaterThan(0)
  })

  it.each(nested)('synthesizes the nested stack %s as its committed snapshot', async (file) => {
    const template = JSON.parse(readFileSync(path.join(assembly.directory, file), 'utf8'))
    const name = file.replace(/[0-9A-F]{8}\.nested\.template\.json$/, '.nested.template.json')
    await expect(canonicalTemplate(template)).toMatchFileSnapshot(`${SNAPSHOT_DIR}/${name}`)
  })

  it('deletes everything the exporter stack created when the test ends: no resource is retained, the buckets are emptied', () => {
    const resources = Object.values(Template.fromStack(exporter).toJSON().Resources) as { DeletionPolicy?: string }[]

    expect(
      resources.filter((resource) => resource.DeletionPolicy !== undefined && resource.DeletionPolicy !== 'Delete'),
    ).toEqual([])
    Template.fromStack(exporter).resourceCountIs('Custom::S3AutoDeleteObjects', 2)
  })

  it('serves the stand-in through a function URL without IAM auth: the token header is the only check', () => {
    const template = Template.fromStack(standIn)

    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE' })
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: {
          DEMO_DAY: '2026-11-21',
          DEVICE_ROWS: '200',
          TOKEN_SECRET_ARN: Match.objectLike({ Ref: Match.stringLikeRegexp('^Token') }),
        },
      },
    })
  })

  it('invokes the export for both dates and for the rejected token, and queries the table and both views', () => {
    const assertionStack = stacks.find((stack) => ![standIn.stackName, exporter.stackName].includes(stack.stackName))
    const text = JSON.stringify(assertionStack?.template)

    for (const date of ['2026-11-21', '2026-11-22']) expect(text).toContain(`exportDate\\":\\"${date}`)
    expect(text).toContain('AUTH_REJECTED')
    for (const view of ['FROM devices_latest', 'FROM devices_changes', 'FROM devices WHERE'])
      expect(text).toContain(view)
    expect(test.node.id).toBe('InventoryExportIntegTest')
  })
})
