/**
 * Validates a synthesized template against CloudFormation's registry schemas: the JSON Schema AWS publishes for
 * each resource type, as cfn-lint ships them (vendored under schemas/, see schemas/README.md). Intrinsics are
 * resolved where the value is known at synth (pseudo parameters, Join and Sub of them); a value only the deploy
 * knows (a Ref to a resource, GetAtt) is not judged, nor is anything below it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'

const SCHEMA_DIR = join(import.meta.dirname, 'schemas')

/** Stand-ins for the pseudo parameters, shaped as AWS's are, so patterns that include them can be checked. */
const PSEUDO: Readonly<Record<string, string>> = {
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '123456789012',
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
}

/** cfn-lint's own `format` names (src/cfnlint/rules/formats), checked with the patterns cfn-lint uses. */
const ARN = '^arn:aws[a-z-]*:'
const CFN_FORMATS: Readonly<Record<string, RegExp>> = {
  'AWS::EC2::SecurityGroup.Id': /^sg-([a-fA-F0-9]{8}|[a-fA-F0-9]{17})$/,
  'AWS::EC2::Subnet.Id': /^subnet-([0-9A-Fa-f]{8}|[0-9A-Fa-f]{17})$/,
  'AWS::IAM::Role.Arn': new RegExp(`${ARN}iam::\\d{12}:role/.+$`),
  'AWS::KMS::Alias.AliasName': /^alias\/[a-zA-Z0-9:/_-]+$/,
  'AWS::KMS::Key.Arn': new RegExp(`${ARN}kms:[a-z0-9-]+:\\d{12}:(key|alias)/.+$`),
  'AWS::KMS::Key.Id':
    /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias\/[a-zA-Z0-9/_-]+|arn:.+)$/,
  'AWS::Lambda::Function.Arn': new RegExp(`${ARN}lambda:[a-z0-9-]+:\\d{12}:function:.+$`),
  'AWS::Logs::LogGroup.Name': /^[.\-_/#A-Za-z0-9]{1,512}$/,
  'AWS::S3::Bucket.Name': /^(?![.-])(?!.*\.\.)(?!.*-\.)(?!.*\.-)[a-z0-9.-]{3,63}(?<![.-])$/,
  'AWS::SNS::Topic.Arn': new RegExp(`${ARN}sns:[a-z0-9-]+:\\d{12}:.+$`),
  'AWS::SQS::Queue.Arn': new RegExp(`${ARN}sqs:[a-z0-9-]+:\\d{12}:.+$`),
}

const validators = (): Map<string, ValidateFunction> => {
  // strict: false, since the registry schemas carry keywords of their own (insertionOrder, tagging, handlers, ...);
  // no "u" flag, since their patterns are written for Java's regexes, which accept escapes such as `\_`.
  // validateSchema: false, since some name the provider meta-schema as $schema, which is not vendored.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false, validateSchema: false })
  addFormats.default(ajv)
  for (const [name, pattern] of Object.entries(CFN_FORMATS)) ajv.addFormat(name, pattern)
  // Lists of ids are checked item by item where the schema says so; "json" is any JSON (a policy document).
  for (const name of ['AWS::EC2::SecurityGroup.Ids', 'AWS::EC2::Subnet.Ids', 'json', 'int64']) ajv.addFormat(name, true)
  const byType = new Map<string, ValidateFunction>()
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as { typeName: string }
    byType.set(schema.typeName, ajv.compile(schema))
  }
  return byType
}

let compiled: Map<string, ValidateFunction> | undefined

const INTRINSIC = /^(Ref|Fn::[A-Za-z]+|Condition)$/
const isIntrinsic = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  INTRINSIC.test(Object.keys(value)[0]!)

/** A value with every intrinsic resolved that synth can resolve; `unresolved` collects the JSON pointers of the rest. */
const resolve = (value: unknown, path: string, stackName: string, unresolved: Set<string>): unknown => {
  if (Array.isArray(value)) {
    return value.map((item, i) => resolve(item, `${path}/${i}`, stackName, unresolved)).filter((v) => v !== NO_VALUE)
  }
  if (typeof value !== 'object' || value === null) return value
  if (isIntrinsic(value)) {
    const known = resolveIntrinsic(value, stackName)
    if (known === undefined) unresolved.add(path)
    return known ?? value
  }
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const resolved = resolve(child, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, stackName, unresolved)
    if (resolved !== NO_VALUE) out[key] = resolved
  }
  return out
}

const NO_VALUE = Symbol('AWS::NoValue')

const resolveIntrinsic = (value: Record<string, unknown>, stackName: string): unknown => {
  const [name, argument] = Object.entries(value)[0]!
  if (name === 'Ref' && typeof argument === 'string') {
    if (argument === 'AWS::NoValue') return NO_VALUE
    if (argument === 'AWS::StackName') return stackName
    return PSEUDO[argument]
  }
  if (name === 'Fn::Join' && Array.isArray(argument)) {
    const [separator, parts] = argument as [string, unknown[]]
    const resolved = parts.map((part) => (isIntrinsic(part) ? resolveIntrinsic(part, stackName) : part))
    return resolved.every((part) => typeof part === 'string') ? resolved.join(separator) : undefined
  }
  if (name === 'Fn::Sub' && typeof argument === 'string') {
    const text = argument.replace(/\$\{(AWS::[A-Za-z]+)\}/g, (whole, pseudo: string) =>
      pseudo === 'AWS::StackName' ? stackName : (PSEUDO[pseudo] ?? whole),
    )
    return /\$\{[^!]/.test(text) ? undefined : text
  }
  return undefined
}

export interface SchemaViolation {
  readonly resource: string
  readonly type: string
  readonly path: string
  readonly message: string
}

/** Every way the template's resources break their registry schemas; throws for a type with no vendored schema. */
export const registrySchemaViolations = (template: Record<string, unknown>, stackName: string): SchemaViolation[] => {
  compiled ??= validators()
  const violations: SchemaViolation[] = []
  const resources = template.Resources as Record<string, { Type: string; Properties?: unknown }>
  for (const [logicalId, { Type, Properties }] of Object.entries(resources)) {
    const validate = compiled.get(Type)
    if (validate === undefined) throw new Error(`no registry schema vendored for ${Type} (${logicalId})`)
    const unresolved = new Set<string>()
    const properties = resolve(Properties ?? {}, '', stackName, unresolved)
    if (validate(properties)) continue
    for (const error of validate.errors ?? []) {
      const judged = [...unresolved].every((p) => error.instancePath !== p && !error.instancePath.startsWith(`${p}/`))
      if (!judged) continue
      const detail = error.params && 'limit' in error.params ? ` (${JSON.stringify(error.params)})` : ''
      violations.push({
        resource: logicalId,
        type: Type,
        path: error.instancePath,
        message: `${error.message}${detail}`,
      })
    }
  }
  return violations
}

/** The resource types whose schemas are vendored. */
export const vendoredTypes = (): string[] => {
  compiled ??= validators()
  return [...compiled.keys()].sort()
}
