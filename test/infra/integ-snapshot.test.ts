/**
 * The integration test's snapshot, checked without an account by integ-runner itself, as an operator runs it:
 * `npx integ-runner` synthesizes integ/integ.export.ts (the functions bundled) and compares its templates with
 * integ/integ.export.ts.snapshot/, asset hashes aside. A change to the stack, the stand-in or the assertions shows
 * up as a diff to review; `npx integ-runner --update-on-failed --dry-run` rewrites the snapshot without deploying.
 * The other tests synthesize the test's stacks in-process, without bundling.
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { App } from 'aws-cdk-lib'
import { Match, Template } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { addIntegTest, integContext } from '../../integ/integ-app.ts'
import { PROJECT_ROOT, SKIP_BUNDLING, scratchDir } from './synth.ts'

const INTEG_RUNNER = path.join(PROJECT_ROOT, 'node_modules/@aws-cdk/integ-runner/bin/integ-runner')

/** `integ-runner <args>` in the repository, on this Node (it starts the app with `node` from PATH), no AWS credentials. */
const integRunner = (args: readonly string[]): Promise<{ exitCode: number; output: string }> =>
  new Promise((resolve) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')))
    env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`
    execFile(
      process.execPath,
      [INTEG_RUNNER, ...args],
      { cwd: PROJECT_ROOT, env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr })
      },
    )
  })

/** Paths under integ/ that git does not track and does not ignore: what a run would leave in a clone. */
const untrackedUnderInteg = (): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(
      'git',
      ['status', '--porcelain', '--untracked-files=all', 'integ'],
      { cwd: PROJECT_ROOT },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    )
  })

const synthesizeIntegApp = () => {
  const app = new App({ context: { ...integContext(), ...SKIP_BUNDLING }, outdir: scratchDir() })
  const integ = addIntegTest(app)
  return { ...integ, assembly: app.synth() }
}

it('npx integ-runner compares the synthesized test with its committed snapshot, exits 0 and leaves nothing untracked', {
  timeout: 600_000,
}, async () => {
  const before = await untrackedUnderInteg()
  const { exitCode, output } = await integRunner([])

  expect(output).toMatch(/UNCHANGED\s+integ\.export/)
  expect(output).toContain('Tests:    1 passed, 1 total')
  expect(exitCode).toBe(0)
  expect(await untrackedUnderInteg()).toBe(before)
})

describe('the integration test (integ/integ.export.ts)', () => {
  const { standIn, exporter, test, assembly } = synthesizeIntegApp()
  const stacks = assembly.stacks
  const nested = readdirSync(assembly.directory).filter((file) => file.endsWith('.nested.template.json'))

  it('has the nested stacks of the exporter', () => {
    expect(nested.length).toBeGreaterThan(0)
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
