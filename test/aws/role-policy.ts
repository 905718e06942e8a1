/**
 * The exporter role's identity policies as a synthesized template states them, with CloudFormation's intrinsic
 * functions resolved to the local stand-ins' names, so an IAM evaluator can judge requests against them.
 */

/** The account, region and partition the harness plays. */
export const LOCAL_ACCOUNT = '123456789012'
export const LOCAL_REGION = 'us-east-1'
/** The exporter role as the requests' principal. */
export const EXPORTER_ROLE_ARN = `arn:aws:iam::${LOCAL_ACCOUNT}:role/InventoryExport-ExporterRole`

export interface TemplateResource {
  readonly Type: string
  readonly Properties?: Record<string, unknown>
}
export interface SynthesizedTemplate {
  readonly Resources: Record<string, TemplateResource>
}

export interface LocalNames {
  /** What a Ref to (or the name of) the stack's warehouse bucket becomes. */
  readonly bucket: string
  /** What a Ref to the stack's token secret becomes. */
  readonly secretArn: string
}

export interface IdentityPolicy {
  readonly name: string
  readonly policy: { readonly Version: string; readonly Statement: readonly Record<string, unknown>[] }
}

const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': LOCAL_REGION,
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
}

/** A value with Ref, Fn::GetAtt, Fn::Join, Fn::Split and Fn::Select replaced by what they name locally. */
export const resolveIntrinsics = (value: unknown, template: SynthesizedTemplate, names: LocalNames): unknown => {
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve)
    if (v === null || typeof v !== 'object') return v
    const object = v as Record<string, unknown>
    if ('Ref' in object) return refOf(String(object.Ref))
    if ('Fn::GetAtt' in object) {
      const [id, attribute] = object['Fn::GetAtt'] as [string, string]
      return attributeOf(id, attribute)
    }
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]]
      return parts.map((p) => String(resolve(p))).join(separator)
    }
    if ('Fn::Split' in object) {
      const [separator, text] = object['Fn::Split'] as [string, unknown]
      return String(resolve(text)).split(separator)
    }
    if ('Fn::Select' in object) {
      const [index, list] = object['Fn::Select'] as [number, unknown]
      return (resolve(list) as unknown[])[index]
    }
    return Object.fromEntries(Object.entries(object).map(([k, inner]) => [k, resolve(inner)]))
  }
  const typeOf = (id: string) => template.Resources[id]?.Type
  const refOf = (id: string): string => {
    if (PSEUDO[id] !== undefined) return PSEUDO[id]
    if (typeOf(id) === 'AWS::S3::Bucket') return names.bucket
    if (typeOf(id) === 'AWS::SecretsManager::Secret') return names.secretArn
    // A state machine's Ref is its ARN.
    if (typeOf(id) === 'AWS::StepFunctions::StateMachine') {
      return `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${id}`
    }
    return `local-${id}`
  }
  const attributeOf = (id: string, attribute: string): string => {
    const type = typeOf(id)
    if (type === 'AWS::S3::Bucket' && attribute === 'Arn') return `arn:aws:s3:::${names.bucket}`
    // A function's ARN as IAM matches it (`function:<name>`, and `:*` for its versions).
    if (type === 'AWS::Lambda::Function' && attribute === 'Arn') {
      return `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${id}`
    }
    const service = (type ?? 'unknown::unknown').split('::')[1]!.toLowerCase()
    return `arn:aws:${service}:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${id}/${attribute}`
  }
  return resolve(value)
}

/** The inline policies (AWS::IAM::Policy and the role's own) of the role whose logical id starts with `rolePrefix`. */
export const rolePolicies = (
  template: SynthesizedTemplate,
  rolePrefix: string,
  names: LocalNames,
): IdentityPolicy[] => {
  const roleIds = Object.keys(template.Resources).filter(
    (id) => id.startsWith(rolePrefix) && template.Resources[id]!.Type === 'AWS::IAM::Role',
  )
  if (roleIds.length !== 1) throw new Error(`expected one role ${rolePrefix}*, found ${roleIds.join(', ') || 'none'}`)
  const roleId = roleIds[0]!
  const role = template.Resources[roleId]!.Properties ?? {}
  if ((role.ManagedPolicyArns as unknown[] | undefined)?.length) {
    throw new Error(`role ${roleId} has managed policies; this harness reads inline policies only`)
  }
  const attached = Object.entries(template.Resources).filter(
    ([, r]) =>
      r.Type === 'AWS::IAM::Policy' &&
      ((r.Properties?.Roles as { Ref?: string }[] | undefined) ?? []).some((ref) => ref.Ref === roleId),
  )
  const inline = ((role.Policies as { PolicyName: string; PolicyDocument: unknown }[] | undefined) ?? []).map(
    (p): [string, unknown] => [p.PolicyName, p.PolicyDocument],
  )
  return [...attached.map(([id, r]): [string, unknown] => [id, r.Properties?.PolicyDocument]), ...inline].map(
    ([name, document]) => ({ name, policy: resolveIntrinsics(document, template, names) as IdentityPolicy['policy'] }),
  )
}

/** Every action the policies allow, as written (no wildcard expansion: the role has none). */
export const grantedActions = (policies: readonly IdentityPolicy[]): string[] =>
  [
    ...new Set(
      policies.flatMap((p) =>
        p.policy.Statement.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action ?? []].flat() as string[]),
      ),
    ),
  ].sort()

/**
 * The environment a function of the template is deployed with (the first whose logical id starts with `idPrefix`),
 * its configuration given inline (`config`) instead of the bundled file.
 */
export const functionEnvironment = (
  template: SynthesizedTemplate,
  names: LocalNames,
  idPrefix: string,
  config: unknown,
): Record<string, string> => {
  const [, fn] = Object.entries(template.Resources).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(idPrefix),
  )!
  const variables = (fn.Properties!.Environment as { Variables: Record<string, unknown> }).Variables
  const resolved = resolveIntrinsics(variables, template, names) as Record<string, string>
  const { EXPORT_CONFIG_FILE: _bundled, ...environment } = resolved
  return { ...environment, EXPORT_CONFIG: JSON.stringify(config) }
}
