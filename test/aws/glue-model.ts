/**
 * The Glue API model's constraints (lengths, ranges, patterns, enums, required members), vendored from botocore's
 * service model in models/glue-constraints.json, checked against a request as Glue's front end checks it. The
 * problems read like Glue's own: "Value at 'tableInput.storageDescriptor.columns.1.member.name' failed to satisfy
 * constraint: Member must have length less than or equal to 255".
 */
import { readFileSync } from 'node:fs'

interface Shape {
  readonly type: string
  readonly min?: number
  readonly max?: number
  readonly pattern?: string
  readonly enum?: readonly string[]
  readonly required?: readonly string[]
  readonly members?: Readonly<Record<string, string>>
  readonly member?: string
  readonly key?: string
  readonly value?: string
}

export interface GlueModel {
  readonly source: string
  readonly botocoreVersion: string
  readonly apiVersion: string
  readonly operations: Readonly<Record<string, string>>
  readonly shapes: Readonly<Record<string, Shape>>
}

export const GLUE_MODEL: GlueModel = JSON.parse(
  readFileSync(new URL('./models/glue-constraints.json', import.meta.url), 'utf8'),
) as GlueModel

/** A shape by name; a name the vendored model lacks is a harness bug, not a request problem. */
export const glueShape = (name: string): Shape => {
  const shape = GLUE_MODEL.shapes[name]
  if (shape === undefined) throw new Error(`shape ${name} is not in the vendored Glue model`)
  return shape
}

// Smithy patterns are unanchored ECMAScript patterns; Glue's service matches them against the whole value.
const patterns = new Map<string, RegExp>()
const fullMatch = (pattern: string): RegExp => {
  const compiled = patterns.get(pattern) ?? new RegExp(`^(?:${pattern})$`, 'u')
  patterns.set(pattern, compiled)
  return compiled
}

// Smithy's length counts Unicode code points of a string, and entries of a list or map.
const lengthOf = (value: unknown): number =>
  typeof value === 'string'
    ? [...value].length
    : Array.isArray(value)
      ? value.length
      : Object.keys(value as object).length

/** Every way `value` breaks `shapeName`; the path names members in Glue's lowerCamel style. */
export const shapeProblems = (shapeName: string, value: unknown, path: string): string[] => {
  const shape = glueShape(shapeName)
  const fail = (constraint: string) => [`Value at '${path}' failed to satisfy constraint: ${constraint}`]
  const problems: string[] = []
  switch (shape.type) {
    case 'structure': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('Member must be an object')
      const object = value as Record<string, unknown>
      for (const name of shape.required ?? []) {
        if (object[name] === undefined) problems.push(...fail(`Member ${name} must not be null`))
      }
      for (const [name, inner] of Object.entries(object)) {
        const target = shape.members?.[name]
        const memberPath = `${path}.${name[0]!.toLowerCase()}${name.slice(1)}`
        if (target === undefined) problems.push(`Value at '${memberPath}' is not a member of ${shapeName}`)
        else if (inner !== undefined && inner !== null) problems.push(...shapeProblems(target, inner, memberPath))
      }
      return problems
    }
    case 'list':
      if (!Array.isArray(value)) return fail('Member must be a list')
      for (const [i, item] of value.entries())
        problems.push(...shapeProblems(shape.member!, item, `${path}.${i + 1}.member`))
      break
    case 'map':
      if (typeof value !== 'object' || value === null) return fail('Member must be a map')
      for (const [key, inner] of Object.entries(value)) {
        problems.push(
          ...shapeProblems(shape.key!, key, `${path}.key`),
          ...shapeProblems(shape.value!, inner, `${path}.${key}`),
        )
      }
      break
    case 'string':
      if (typeof value !== 'string') return fail('Member must be a string')
      if (shape.enum !== undefined && !shape.enum.includes(value)) {
        problems.push(...fail(`Member must satisfy enum value set: [${shape.enum.join(', ')}]`))
      }
      if (shape.pattern !== undefined && !fullMatch(shape.pattern).test(value)) {
        problems.push(...fail(`Member must satisfy regular expression pattern: ${shape.pattern}`))
      }
      break
    case 'integer':
    case 'long':
      if (!Number.isInteger(value)) return fail('Member must be an integer')
      if (shape.min !== undefined && (value as number) < shape.min)
        problems.push(...fail(`Member must have value greater than or equal to ${shape.min}`))
      if (shape.max !== undefined && (value as number) > shape.max)
        problems.push(...fail(`Member must have value less than or equal to ${shape.max}`))
      return problems
    case 'boolean':
      return typeof value === 'boolean' ? [] : fail('Member must be a boolean')
    default:
      return []
  }
  const length = lengthOf(value)
  if (shape.min !== undefined && length < shape.min)
    problems.push(...fail(`Member must have length greater than or equal to ${shape.min}`))
  if (shape.max !== undefined && length > shape.max)
    problems.push(...fail(`Member must have length less than or equal to ${shape.max}`))
  return problems
}

/** Every way the JSON body of a Glue operation (e.g. CreateTable) breaks the model. */
export const glueRequestProblems = (operation: string, body: unknown): string[] => {
  const input = GLUE_MODEL.operations[operation]
  if (input === undefined) throw new Error(`operation ${operation} is not in the vendored Glue model`)
  // Glue names the request's members from the lowerCamel input, e.g. tableInput.name.
  return shapeProblems(input, body, '').map((p) => p.replace("at '.", "at '"))
}
