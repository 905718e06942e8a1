/**
 * Checks a state machine's definition as cfn-lint's rule E3601 does, against the Amazon States Language schema cfn-lint
 * ships (vendored in schemas/step-functions/, see schemas/README.md), with its one keyword of its own, `requiredXor`
 * (exactly one of the names present), plus the Distributed Map's rules the schema leaves open (the Step Functions
 * Developer Guide, "Map state in Distributed mode": a Mode of INLINE or DISTRIBUTED, and with DISTRIBUTED an
 * ExecutionType of STANDARD or EXPRESS, MaxConcurrency at most 10,000).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv } from 'ajv'

const SCHEMA = JSON.parse(readFileSync(join(import.meta.dirname, 'schemas/step-functions/statemachine.json'), 'utf8'))

const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false })
ajv.addKeyword({
  keyword: 'requiredXor',
  type: 'object',
  schemaType: 'array',
  validate: (names: readonly string[], data: Record<string, unknown>) =>
    names.filter((name) => name in data).length === 1,
})
const validate = ajv.compile(SCHEMA)

type Json = Record<string, unknown>

/** Every Map state of `definition`, nested ones included, with its path. */
const mapStates = (definition: Json, at = ''): { path: string; state: Json }[] =>
  Object.entries((definition.States ?? {}) as Record<string, Json>).flatMap(([name, state]) => [
    ...(state.Type === 'Map' ? [{ path: `${at}${name}`, state }] : []),
    ...(state.ItemProcessor ? mapStates(state.ItemProcessor as Json, `${at}${name}/`) : []),
  ])

/** The problems Step Functions would refuse the definition for; none when it is accepted. */
export const stateMachineProblems = (definition: Json): string[] => {
  const problems = validate(definition)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.keyword} ${e.message ?? ''}`.trim())
  for (const { path, state } of mapStates(definition)) {
    const config = ((state.ItemProcessor as Json | undefined)?.ProcessorConfig ?? {}) as Json
    const mode = config.Mode ?? 'INLINE'
    if (mode !== 'INLINE' && mode !== 'DISTRIBUTED') problems.push(`${path}: ProcessorConfig.Mode ${String(mode)}`)
    if (mode === 'DISTRIBUTED' && config.ExecutionType !== 'STANDARD' && config.ExecutionType !== 'EXPRESS') {
      problems.push(`${path}: a Distributed Map needs ProcessorConfig.ExecutionType STANDARD or EXPRESS`)
    }
    if (mode === 'DISTRIBUTED' && Number(state.MaxConcurrency ?? 0) > 10_000) {
      problems.push(`${path}: MaxConcurrency above 10,000`)
    }
  }
  return problems
}
