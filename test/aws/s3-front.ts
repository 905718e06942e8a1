/**
 * S3's authorization in front of s3rver: every request is decided by IAM as the exporter role, and a GetObject or
 * HeadObject of a missing key answers 404 NoSuchKey only where s3:ListBucket on the bucket is allowed for that
 * request (the implicit list check carries no s3:prefix), else 403 AccessDenied, as S3's GetObject documentation
 * ("Permissions") says. s3rver keeps the bytes, the multipart uploads and the listings; the 412s of a failed
 * If-Match / If-None-Match are answered by test/support/s3rver.ts's conditional-write shim behind this.
 */
import { createRequire } from 'node:module'
import type { KoaContext, KoaMiddleware } from '../support/s3rver.ts'
import type { AuthorizationRequest, Authorizer } from './iam.ts'

type S3ErrorConstructor = new (code: string, message: string, detail?: Record<string, string>) => Error
const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error') as S3ErrorConstructor

const has = (ctx: KoaContext, parameter: string): boolean => parameter in ctx.query

/** The IAM action, resource and context keys S3 authorizes a path-style request with. */
export const s3Authorization = (ctx: KoaContext): AuthorizationRequest => {
  const [bucket = '', ...keyParts] = ctx.path.split('/').filter((part) => part !== '')
  const bucketArn = `arn:aws:s3:::${bucket}`
  if (keyParts.length === 0) {
    if (ctx.method === 'GET' && has(ctx, 'uploads'))
      return { action: 's3:ListBucketMultipartUploads', resource: bucketArn }
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      const prefix = ctx.query.prefix
      return {
        // ListObjectVersions is authorized as s3:ListBucketVersions, with s3:prefix as for a listing.
        action: has(ctx, 'versions') ? 's3:ListBucketVersions' : 's3:ListBucket',
        resource: bucketArn,
        // S3 sets s3:prefix from the request's prefix parameter; a listing without one carries no such key.
        context: typeof prefix === 'string' ? { 's3:prefix': prefix } : {},
      }
    }
    if (ctx.method === 'POST' && has(ctx, 'delete')) return { action: 's3:DeleteObject', resource: `${bucketArn}/*` }
    return { action: `s3:(bucket ${ctx.method})`, resource: bucketArn }
  }
  const objectArn = `${bucketArn}/${keyParts.map(decodeURIComponent).join('/')}`
  // A request that names a version id is authorized as the action's Version form (S3 API: "Permissions").
  const versioned = has(ctx, 'versionId')
  switch (ctx.method) {
    case 'GET':
      return has(ctx, 'uploadId')
        ? { action: 's3:ListMultipartUploadParts', resource: objectArn }
        : { action: versioned ? 's3:GetObjectVersion' : 's3:GetObject', resource: objectArn }
    case 'HEAD':
      return { action: versioned ? 's3:GetObjectVersion' : 's3:GetObject', resource: objectArn }
    case 'PUT':
    case 'POST':
      // PutObject, CreateMultipartUpload, UploadPart and CompleteMultipartUpload are all authorized as s3:PutObject.
      return { action: 's3:PutObject', resource: objectArn }
    case 'DELETE':
      return has(ctx, 'uploadId')
        ? { action: 's3:AbortMultipartUpload', resource: objectArn }
        : { action: versioned ? 's3:DeleteObjectVersion' : 's3:DeleteObject', resource: objectArn }
    default:
      return { action: `s3:(object ${ctx.method})`, resource: objectArn }
  }
}

const isMissingKey = (error: unknown): boolean => (error as { code?: string }).code === 'NoSuchKey'

/** The Koa middleware to pass as startS3's `front`. */
export const s3IamFront =
  (authorizer: Authorizer): KoaMiddleware =>
  async (ctx, next) => {
    const request = s3Authorization(ctx)
    const decision = await authorizer.decide(request)
    if (!decision.allowed) throw new S3Error('AccessDenied', 'Access Denied')
    try {
      await next()
    } catch (error) {
      if (!isMissingKey(error) || request.action !== 's3:GetObject') throw error
      const bucketArn = request.resource.slice(0, request.resource.indexOf('/'))
      // The implicit check: may this caller list the bucket, with no prefix in the request? Not a request it sent.
      const list = await authorizer.decide({ action: 's3:ListBucket', resource: bucketArn }, { record: false })
      if (!list.allowed) {
        authorizer.refuse(
          request,
          `missing key answered 403: s3:ListBucket on ${bucketArn} without s3:prefix is ${list.result}`,
        )
        throw new S3Error('AccessDenied', 'Access Denied')
      }
      throw error
    }
  }
