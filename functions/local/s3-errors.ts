/**
 * What S3 answered the first request to an `--out s3://...` warehouse, as the one coded line the command ends with:
 * the bucket is not there, these credentials may not use it, or there are no usable credentials (or no network).
 * Later refusals, once tables run, are the store's own (PUBLISH_FAILED per table), as in the Lambda.
 */
import { ErrorCode, ExportError, FailureClass } from '../export/index.ts'
import { type AwsHints, AwsUnavailableError } from './verify-errors.ts'

/** Where an S3 warehouse is. */
export interface S3Location {
  /** As the operator wrote it (`--out`), or as the stack's outputs make it (`--stack`). */
  readonly url: string
  readonly bucket: string
  /** No leading or trailing slash; empty at the top of the bucket. */
  readonly prefix: string
}

/** The rights the local commands use on the warehouse, as docs/operations.md lists them. */
export const s3Permissions = ({ bucket, prefix }: S3Location): string => {
  const objects = `arn:aws:s3:::${bucket}/${prefix === '' ? '' : `${prefix}/`}*`
  const listing = prefix === '' ? '' : ` (s3:prefix ${prefix}/*)`
  return `s3:ListBucket on arn:aws:s3:::${bucket}${listing}, and s3:GetObject, s3:PutObject and s3:AbortMultipartUpload on ${objects}`
}

const SEE_DOCS = 'docs/operations.md, "Running the CLI against the deployed bucket"'

/** Credentials and endpoints as the AWS SDK finds them; the CLI has no flags of its own for them. */
export const S3_HINTS: AwsHints = {
  credentials: `sign in with credentials of the bucket's account (AWS_PROFILE, aws sso login, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and set AWS_REGION; nothing was written (${SEE_DOCS})`,
  network:
    'check the network, AWS_REGION and any endpoint set (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3); nothing was written',
}

export class WarehouseBucketNotFoundError extends ExportError {
  constructor(location: S3Location, cause: unknown) {
    super(
      ErrorCode.WAREHOUSE_BUCKET_NOT_FOUND,
      FailureClass.CONFIG,
      `--out ${location.url}: the bucket ${location.bucket} does not exist (NoSuchBucket)`,
      {
        cause,
        hint: "name the stack's bucket (its output WarehouseBucketName, or pass --stack NAME), in the account and region of your credentials; nothing was written",
      },
    )
  }
}

export class WarehouseAccessDeniedError extends ExportError {
  constructor(location: S3Location, cause: unknown) {
    const { name, message } = cause as Error
    super(ErrorCode.WAREHOUSE_ACCESS_DENIED, FailureClass.AUTH, `--out ${location.url}: ${name}: ${message}`, {
      cause,
      hint: `your credentials need ${s3Permissions(location)}; nothing was written (${SEE_DOCS})`,
    })
  }
}

/** The coded failure of a request S3 refused before any table ran. */
export const s3WarehouseFailure = (location: S3Location, error: unknown): ExportError => {
  const name = (error as Error | undefined)?.name
  if (name === 'NoSuchBucket') return new WarehouseBucketNotFoundError(location, error)
  if (name === 'AccessDenied') return new WarehouseAccessDeniedError(location, error)
  return new AwsUnavailableError(`--out ${location.url}`, error, S3_HINTS)
}
