/**
 * The stand-ins that decide as AWS does, started together for one synthesized template: s3rver behind S3's IAM
 * front (s3-front.ts), and Glue and Secrets Manager on one JSON endpoint (json-endpoint.ts), all deciding with the
 * exporter role's policies through one Authorizer, which records every action sent.
 *
 * s3rver stays behind the front for storage: multipart uploads, listings and the conditional-write shim are
 * already there and tested; only the decisions S3 makes before touching storage (IAM, the 403 for a missing key)
 * live here, so no second S3 is written and every other test's s3rver is unchanged.
 */
import { type RunningS3, startS3 } from '../support/s3rver.ts'
import { Authorizer } from './iam.ts'
import { type RunningJsonEndpoint, startJsonEndpoint } from './json-endpoint.ts'
import { type IdentityPolicy, type LocalNames, rolePolicies, type SynthesizedTemplate } from './role-policy.ts'
import { s3IamFront } from './s3-front.ts'

export interface AwsHarness {
  readonly authorizer: Authorizer
  readonly policies: readonly IdentityPolicy[]
  readonly s3: RunningS3
  readonly json: RunningJsonEndpoint
  /** AWS_ENDPOINT_URL_* and credentials for an SDK in a child process. */
  readonly sdkEnvironment: Record<string, string>
  close(): Promise<void>
}

export interface AwsHarnessOptions {
  /** The identity policies to decide with; or a template and the prefix of the role's logical id. */
  readonly policies?: readonly IdentityPolicy[]
  readonly template?: SynthesizedTemplate
  /** @default 'ExporterRole' */
  readonly rolePrefix?: string
  readonly names: LocalNames
  readonly secretValue: string
  /** Secrets besides the token's (an imported pseudonymization key's, by its ARN). @default none */
  readonly otherSecrets?: readonly { readonly arn: string; readonly value: string }[]
  /** A bucket with versioning enabled, as the stack's bucket is (test/support/s3rver-versions.ts). @default false */
  readonly versioned?: boolean
}

export const startAwsHarness = async (options: AwsHarnessOptions): Promise<AwsHarness> => {
  const policies =
    options.policies ?? rolePolicies(options.template!, options.rolePrefix ?? 'ExporterRole', options.names)
  const authorizer = new Authorizer(policies)
  const s3 = await startS3(options.names.bucket, {
    front: [s3IamFront(authorizer)],
    versioned: options.versioned ?? false,
  })
  const json = await startJsonEndpoint({
    authorizer,
    secret: { arn: options.names.secretArn, value: options.secretValue },
    ...(options.otherSecrets === undefined ? {} : { otherSecrets: options.otherSecrets }),
  })
  return {
    authorizer,
    policies,
    s3,
    json,
    sdkEnvironment: {
      ...s3.sdkEnvironment,
      AWS_ENDPOINT_URL_GLUE: json.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: json.endpoint,
    },
    close: async () => {
      await s3.close()
      await json.close()
    },
  }
}
