/** cdk-nag v3 acknowledgements, each with a reason specific enough for a security review. */
import { Annotations, Stack, Validations } from 'aws-cdk-lib'
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js'
import type { IConstruct } from 'constructs'

/** A reason shorter than this cannot say why the finding is acceptable. */
export const MIN_ACKNOWLEDGEMENT_REASON_LENGTH = 40

/** Acknowledges one cdk-nag finding (e.g. `AwsSolutions-IAM5[Resource::...]`) on a construct and its children. */
export const acknowledgeFinding = (scope: IConstruct, id: string, reason: string): void => {
  if (reason.trim().length < MIN_ACKNOWLEDGEMENT_REASON_LENGTH) {
    throw new Error(
      `cdk-nag acknowledgement ${id} on ${scope.node.path}: the reason must say why (at least ${MIN_ACKNOWLEDGEMENT_REASON_LENGTH} characters)`,
    )
  }
  // aws-cdk-lib 2.257 (the newest whose cloud assembly integ-runner reads, see the README) refuses an id holding
  // `::` more than once, as every cdk-nag finding on a resource does (`Resource::arn:<AWS::Partition>:...`). Such an
  // id goes into the same metadata entry acknowledge() writes, which is where cdk-nag looks.
  if (id.split('::').length <= 2) {
    Validations.of(scope).acknowledge({ id, reason })
    // 2.257 hands the CDK's own warnings the prefixed id, which matches none of them: acknowledged by its bare id.
    const annotation = /^annotation::(.+)$/i.exec(id)
    if (annotation) Annotations.of(scope).acknowledgeWarning(annotation[1]!, reason)
    return
  }
  const key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
  const latest = scope.node.metadata.filter((entry) => entry.type === key).at(-1)?.data as object | undefined
  scope.node.addMetadata(key, { ...latest, [`annotation::${id}`]: reason })
}

/**
 * Acknowledges AwsSolutions-IAM5 for one wildcard resource (e.g. `${bucketArn}/prefix/*`) of the policies under
 * `scope`, spelling the finding id exactly as cdk-nag does.
 */
export const acknowledgeWildcardResource = (scope: IConstruct, resource: string, reason: string): void => {
  const flattened = flattenCfnReference(Stack.of(scope).resolve(resource))
  acknowledgeFinding(scope, `AwsSolutions-IAM5[Resource::${flattened}]`, reason)
}

/** One acknowledgement recorded in the construct tree. */
export interface NagAcknowledgement {
  readonly path: string
  readonly id: string
  readonly reason: string
}

/**
 * Every acknowledgement recorded under `root`, for audits and tests. A construct's latest metadata entry holds all
 * of its acknowledgements: each acknowledgement adds an entry with those before it.
 */
export const listNagAcknowledgements = (root: IConstruct): NagAcknowledgement[] =>
  root.node.findAll().flatMap((construct) => {
    const latest = construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && entry.data)
      .at(-1)
    return Object.entries((latest?.data ?? {}) as Record<string, unknown>).map(([key, reason]) => ({
      path: construct.node.path,
      id: key.replace(/^annotation::/i, ''),
      reason: String(reason),
    }))
  })
