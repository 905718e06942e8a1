/**
 * The Lambda handler's setting as the tests give it: the stack's environment variables around a configuration and
 * the token secret (Secrets Manager mocked; S3 is s3rver, Glue the stand-in of aws-mocks.ts). One copy for
 * handler.test.ts, handler-failures.test.ts and per-table-invocations.test.ts.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { mockClient } from 'aws-sdk-client-mock'

export const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:inventory-token-AbCdEf'
export const SERVICE_NAME = 'inventory-export-test'
/** The bucket s3rver holds for these tests (`startS3(WAREHOUSE_BUCKET)`); objects go under `inventory/`. */
export const WAREHOUSE_BUCKET = 'warehouse'

/** Three of the stand-in's demo tables. */
export const DEMO_TABLE_CONFIG: readonly { readonly id: string; readonly name: string }[] = [
  { id: '1001', name: 'devices' },
  { id: '1002', name: 'installed_software' },
  { id: '1003', name: 'users' },
]

export interface LambdaConfigOptions {
  /** The `source` section. */
  readonly source: Record<string, unknown>
  /** @default DEMO_TABLE_CONFIG */
  readonly tables?: readonly Record<string, unknown>[]
  /** Merged into `export`, after retries that wait a few milliseconds. */
  readonly exportTuning?: Record<string, unknown>
}

/** The variables the stack sets, around the configuration (inline, as EXPORT_CONFIG). */
export const lambdaEnvironment = ({ source, tables = DEMO_TABLE_CONFIG, exportTuning = {} }: LambdaConfigOptions) => ({
  EXPORT_CONFIG: JSON.stringify({
    source,
    tables,
    export: { retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...exportTuning },
    warehouse: { prefix: 'inventory' },
  }),
  WAREHOUSE_BUCKET,
  TOKEN_SECRET_ARN: SECRET_ARN,
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
})

/** Secrets Manager answering SECRET_ARN with `token`; `mock.reset()` and `answer` again between tests. */
export const tokenSecretStandIn = (token: string) => {
  const client = new SecretsManagerClient({ region: 'us-east-1' })
  const mock = mockClient(client)
  const answer = (secretString: string = token) =>
    mock.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({ SecretString: secretString })
  answer()
  return { client, mock, answer }
}
