import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../../functions/export/core/errors.ts'
import { localWarehouseFolder, parseWarehouseTarget } from '../../../functions/local/warehouse-target.ts'

const refusal = (flags: Parameters<typeof parseWarehouseTarget>[0]): string => {
  try {
    parseWarehouseTarget(flags)
  } catch (error) {
    expect(error).toMatchObject({ code: ErrorCode.USAGE_INVALID })
    return (error as Error).message
  }
  throw new Error(`accepted ${JSON.stringify(flags)}`)
}

describe('--out, --glue-database and --stack', () => {
  it.each([
    [{}, { kind: 'folder', folder: 'warehouse' }],
    [{ out: './w' }, { kind: 'folder', folder: './w' }],
    [
      { out: 's3://bucket-1/team/inventory/', 'glue-database': 'inventory' },
      {
        kind: 's3',
        url: 's3://bucket-1/team/inventory/',
        bucket: 'bucket-1',
        prefix: 'team/inventory',
        glueDatabase: 'inventory',
      },
    ],
    [
      { out: 'S3://bucket.name' },
      { kind: 's3', url: 'S3://bucket.name', bucket: 'bucket.name', prefix: '', glueDatabase: undefined },
    ],
    [{ stack: 'InventoryExport' }, { kind: 'stack', stackName: 'InventoryExport' }],
  ])('reads %j', (flags, target) => {
    expect(parseWarehouseTarget(flags)).toEqual(target)
  })

  it.each([
    [
      { out: 'ftp://host/w' },
      '--out ftp://host/w: the scheme ftp:// is not supported; --out takes a folder or s3://BUCKET[/PREFIX]',
    ],
    [{ out: 's3://ab/x' }, '--out s3://ab/x: "ab" is not an S3 bucket name'],
    [{ out: 's3://a..b/x' }, '"a..b" is not an S3 bucket name'],
    [{ out: 's3://192.168.0.1/x' }, '"192.168.0.1" is not an S3 bucket name'],
    [
      { out: 's3://bucket/Inventory' },
      '--out s3://bucket/Inventory: the prefix "Inventory" must be path segments of lowercase',
    ],
    [{ out: 's3://bucket/a//b' }, 'the prefix "a//b"'],
    [{ out: './w', 'glue-database': 'inventory' }, '--glue-database applies to an s3://BUCKET[/PREFIX] --out'],
    [{ out: 's3://bucket/x', 'glue-database': 'Inventory' }, '--glue-database must be a Glue database name'],
    [{ stack: 'S', out: 's3://bucket/x' }, '--stack names the bucket, prefix and Glue database itself; drop --out'],
    [{ stack: 'S', 'glue-database': 'x' }, 'drop --glue-database'],
  ])('refuses %j', (flags, message) => {
    expect(refusal(flags)).toContain(message)
  })

  it('lets the commands of a local folder refuse S3, and any other scheme, with their own next step', () => {
    const query = { command: 'npm run query', hint: 'query it in Athena' }
    expect(localWarehouseFolder(undefined, query)).toBe('warehouse')
    expect(() => localWarehouseFolder('s3://bucket/x', query)).toThrow(
      '--out s3://bucket/x: npm run query works on a local warehouse folder, not on S3',
    )
    expect(() => localWarehouseFolder('gs://bucket/x', query)).toThrow(
      '--out gs://bucket/x: the scheme gs:// is not supported; npm run query takes a folder',
    )
  })
})
