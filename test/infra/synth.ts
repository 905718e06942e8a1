/** Synthesizes the stack in-process for the infrastructure tests; no AWS account, no network. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { afterAll } from 'vitest'
import { parseDeployConfig } from '../../infra/deployment-config.ts'
import { ExportStack } from '../../infra/export-stack.ts'

export const PROJECT_ROOT = join(import.meta.dirname, '..', '..')
export const SAMPLE_CONFIG_FILE = 'config/sample.json'

/** The context of cdk.json (feature flags included), so tests synthesize what `cdk synth` does. */
export const cdkContext = (): Record<string, unknown> =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>

/** config/sample.json as a plain object, to be varied per test. */
export const sampleConfigInput = (): Record<string, unknown> =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, SAMPLE_CONFIG_FILE), 'utf8')) as Record<string, unknown>

/** A copy of the sample with `deployment` (or other top-level sections) merged in one level deep. */
export const sampleWith = (sections: Record<string, Record<string, unknown>>): Record<string, unknown> => {
  const input = sampleConfigInput()
  for (const [key, value] of Object.entries(sections)) {
    input[key] = { ...(input[key] as Record<string, unknown>), ...value }
  }
  return input
}

export interface Synthesized {
  readonly app: App
  readonly stack: ExportStack
  readonly template: Template
}

/** Context that skips asset bundling (esbuild), for tests that only look at the template. */
export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] } as const

export interface SynthesizeOptions {
  /** Run esbuild as `cdk synth` does (slower); otherwise the function code is a placeholder asset. @default false */
  readonly bundle?: boolean
  /** @default a scratch folder removed after the test file */
  readonly outdir?: string
}

const scratch = mkdtempSync(join(tmpdir(), 'inventory-infra-test-'))
// Registered on the root suite of each test file that imports this module.
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A fresh folder for one synthesis, removed after the test file. */
export const scratchDir = (): string => mkdtempSync(join(scratch, 'cdk.out-'))

/** Parses `input` with the stack's schema and synthesizes the stack with the cdk.json context. */
export const synthesize = (input: unknown, options: SynthesizeOptions = {}): Synthesized => {
  const context = { ...cdkContext(), ...(options.bundle ? {} : SKIP_BUNDLING) }
  const app = new App({ context, outdir: options.outdir ?? scratchDir() })
  const config = parseDeployConfig(input, 'test configuration')
  const stack = new ExportStack(app, config.deployment.stackName, { config })
  return { app, stack, template: Template.fromStack(stack) }
}

/** Resources of one type as [logicalId, properties] pairs. */
export const resourcesOfType = (template: Template, type: string): [string, Record<string, unknown>][] =>
  Object.entries(template.findResources(type)).map(([id, resource]) => [
    id,
    resource.Properties as Record<string, unknown>,
  ])
