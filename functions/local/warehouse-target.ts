/**
 * Where `--out` points: a local folder, or `s3://BUCKET[/PREFIX]` (or `--stack NAME`: the deployed stack's bucket,
 * prefix and Glue database). A URL of any other scheme is refused: taken as a folder, `s3://bucket/prefix` once
 * became a folder named `s3:` in the current one.
 */
import {
  FolderWarehouseStore,
  GLUE_DATABASE_PATTERN,
  type TableCatalog,
  UsageError,
  WAREHOUSE_PREFIX_PATTERN,
  WAREHOUSE_PREFIX_RULE,
  type WarehouseStore,
} from '../export/index.ts'
import type { S3Target } from './s3-warehouse.ts'
import { checkWarehouseFolder } from './warehouse-folder.ts'

export type WarehouseTarget = { readonly kind: 'folder'; readonly folder: string } | S3Target

/** The warehouse a command writes and, on S3 with a Glue database, the catalog kept in step with it. */
export interface Warehouse {
  readonly store: WarehouseStore
  readonly catalog: TableCatalog | undefined
  /** A folder on this machine, which `npm run query` can read. */
  readonly local: boolean
}

const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i
const S3_FORM = 's3://BUCKET[/PREFIX]'
/** S3's rules for general purpose bucket names; "..", and names formed like an IP address, are refused too. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
const BUCKET_RULE = '3 to 63 lowercase letters, digits, "." and "-", starting and ending with a letter or digit'

const schemeOf = (out: string): string | undefined => URL_SCHEME.exec(out)?.[1]?.toLowerCase()

const parseS3Url = (out: string) => {
  const [bucket = '', ...rest] = out.slice('s3://'.length).split('/')
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(bucket)) {
    throw new UsageError(
      `--out ${out}: "${bucket}" is not an S3 bucket name (${BUCKET_RULE})`,
      `write --out as ${S3_FORM}, e.g. s3://inventory-warehouse-123456789012/inventory`,
    )
  }
  const prefix = rest.join('/').replace(/\/+$/, '')
  if (prefix !== '' && !WAREHOUSE_PREFIX_PATTERN.test(prefix)) {
    throw new UsageError(`--out ${out}: the prefix "${prefix}" ${WAREHOUSE_PREFIX_RULE}`)
  }
  return { url: out, bucket, prefix }
}

/** `--out`, `--glue-database` and `--stack` of `npm start` and `npm run reprocess`. */
export const parseWarehouseTarget = (flags: {
  readonly out?: string | undefined
  readonly 'glue-database'?: string | undefined
  readonly stack?: string | undefined
}): WarehouseTarget => {
  const { out, 'glue-database': glueDatabase, stack } = flags
  if (stack !== undefined) {
    const clash = [out && '--out', glueDatabase && '--glue-database'].filter(Boolean)
    if (clash.length > 0) {
      throw new UsageError(`--stack names the bucket, prefix and Glue database itself; drop ${clash.join(', ')}`)
    }
    return { kind: 'stack', stackName: stack }
  }
  if (glueDatabase !== undefined && !GLUE_DATABASE_PATTERN.test(glueDatabase)) {
    throw new UsageError(
      `--glue-database must be a Glue database name (lowercase letters, digits and _, starting with a letter), got "${glueDatabase}"`,
    )
  }
  const scheme = out === undefined ? undefined : schemeOf(out)
  if (scheme === undefined) {
    if (glueDatabase !== undefined) {
      throw new UsageError(
        `--glue-database applies to an ${S3_FORM} --out; a local warehouse has no Glue catalog (npm run query reads its registry)`,
      )
    }
    return { kind: 'folder', folder: out ?? 'warehouse' }
  }
  if (scheme !== 's3') {
    throw new UsageError(
      `--out ${out}: the scheme ${scheme}:// is not supported; --out takes a folder or ${S3_FORM}`,
      `write --out as a folder, or as ${S3_FORM} to write to S3`,
    )
  }
  return { kind: 's3', ...parseS3Url(out!), glueDatabase }
}

/** `--out` of the commands that read a local folder only (query, ddl, reset); `refusal` says what to do instead. */
export const localWarehouseFolder = (
  out: string | undefined,
  refusal: { readonly command: string; readonly hint: string },
): string => {
  const scheme = out === undefined ? undefined : schemeOf(out)
  if (scheme === undefined) return out ?? 'warehouse'
  if (scheme === 's3') {
    throw new UsageError(`--out ${out}: ${refusal.command} works on a local warehouse folder, not on S3`, refusal.hint)
  }
  throw new UsageError(
    `--out ${out}: the scheme ${scheme}:// is not supported; ${refusal.command} takes a folder`,
    'write --out as a local warehouse folder',
  )
}

/** Checks the target before anything is downloaded, and opens it. */
export const openWarehouse = async (target: WarehouseTarget): Promise<Warehouse> => {
  if (target.kind === 'folder') {
    await checkWarehouseFolder(target.folder)
    return { store: new FolderWarehouseStore(target.folder), catalog: undefined, local: true }
  }
  // Loaded only here: the AWS SDK clients cost a local export memory and start-up time it has no use for.
  return { ...(await (await import('./s3-warehouse.ts')).openS3Warehouse(target)), local: false }
}
