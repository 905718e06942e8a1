/** Synthesizes the stack in-process for the infrastructure tests; no AWS account, no network. */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { App, type CfnElement, NestedStack, type Stack } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
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
  /** The stack's template with its nested stacks folded in (`withNestedStacks`): what one stack would hold. */
  readonly template: Template
}

type Json = Record<string, unknown>

/** `value` with every `{Ref: name}` of `values` replaced by its value, and every `{"Fn::GetAtt": [id, attr]}` of `atts`. */
const substitute = (value: unknown, values: Json, atts: Map<string, unknown>): unknown => {
  if (Array.isArray(value)) return value.map((v) => substitute(v, values, atts))
  if (value === null || typeof value !== 'object') return value
  const object = value as Json
  const ref = object.Ref
  if (typeof ref === 'string' && Object.keys(object).length === 1 && ref in values) return values[ref]
  const att = object['Fn::GetAtt'] as [string, string] | undefined
  if (Array.isArray(att) && atts.has(att.join('.'))) return atts.get(att.join('.'))
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, substitute(v, values, atts)]))
}

/**
 * The template of `stack` with the resources of its nested stacks (table-stacks.ts) folded in, their parameters
 * and outputs replaced by the parent's values: the one template the per-table assertions were written against.
 */
export const withNestedStacks = (stack: Stack, outdir: string): Template => {
  const json = Template.fromStack(stack).toJSON() as { Resources: Record<string, Json> }
  const nestedStacks = stack.node
    .findAll()
    .filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct))
    .filter((nested) => nested.nestedStackParent === stack)
  const outputs = new Map<string, unknown>()
  for (const nested of nestedStacks) {
    const id = stack.getLogicalId(nested.nestedStackResource as CfnElement)
    const resource = json.Resources[id]!
    const inner = JSON.parse(readFileSync(join(outdir, nested.templateFile), 'utf8')) as {
      Resources: Record<string, Json>
      Outputs?: Record<string, { Value: unknown }>
    }
    const parameters = ((resource.Properties as Json).Parameters ?? {}) as Json
    for (const [innerId, innerResource] of Object.entries(inner.Resources)) {
      json.Resources[innerId] = substitute(innerResource, parameters, new Map()) as Json
    }
    for (const [name, output] of Object.entries(inner.Outputs ?? {})) {
      outputs.set(`${id}.Outputs.${name}`, substitute(output.Value, parameters, new Map()))
    }
    delete json.Resources[id]
  }
  return Template.fromJSON(substitute(json, {}, outputs) as Json)
}

/** Context that skips asset bundling (esbuild), for tests that only look at the template. */
export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] } as const

export interface SynthesizeOptions {
  /** Run esbuild as `cdk synth` does (slower); otherwise the function code is a placeholder asset. @default false */
  readonly bundle?: boolean
  /** @default a scratch folder removed after the test file */
  readonly outdir?: string
}

/**
 * A fresh folder for one synthesis, removed after the test file with the file's temporary folder
 * (test/support/temp-root.ts). Not a folder made when this module loads: files that share a process load it once.
 */
export const scratchDir = (): string => mkdtempSync(join(tmpdir(), 'cdk.out-'))

/** Parses `input` with the stack's schema and synthesizes the stack with the cdk.json context. */
export const synthesize = (input: unknown, options: SynthesizeOptions = {}): Synthesized => {
  const context = { ...cdkContext(), ...(options.bundle ? {} : SKIP_BUNDLING) }
  const outdir = options.outdir ?? scratchDir()
  const app = new App({ context, outdir })
  const config = parseDeployConfig(input, 'test configuration')
  const stack = new ExportStack(app, config.deployment.stackName, { config })
  return { app, stack, template: withNestedStacks(stack, outdir) }
}

/** Resources of one type as [logicalId, properties] pairs. */
export const resourcesOfType = (template: Template, type: string): [string, Record<string, unknown>][] =>
  Object.entries(template.findResources(type)).map(([id, resource]) => [
    id,
    resource.Properties as Record<string, unknown>,
  ])
