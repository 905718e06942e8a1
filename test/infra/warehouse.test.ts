import { Match, type Template } from 'aws-cdk-lib/assertions'
import { beforeAll, describe, expect, it } from 'vitest'
import { tableQueries } from '../../infra/constructs/analyst-queries.ts'
import { resourcesOfType, sampleConfigInput, sampleWith, synthesize } from './synth.ts'

describe('the warehouse built from the sample configuration', () => {
  let template: Template
  beforeAll(() => {
    template = synthesize(sampleConfigInput()).template
  })

  it('creates a versioned, encrypted bucket that blocks public access and logs access to a log bucket', () => {
    template.resourceCountIs('AWS::S3::Bucket', 2)
    template.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LoggingConfiguration: {
        DestinationBucketName: { Ref: Match.stringLikeRegexp('^WarehouseAccessLogs') },
        LogFilePrefix: 'warehouse/',
      },
    })
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ VersioningConfiguration: Match.anyValue() }),
    })
  })

  it('denies every request that does not use TLS 1.2 or later', () => {
    for (const [, policy] of resourcesOfType(template, 'AWS::S3::BucketPolicy')) {
      expect(policy.PolicyDocument).toMatchObject({
        Statement: expect.arrayContaining([
          expect.objectContaining({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      })
    }
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
        ]),
      },
    })
  })

  it('aborts incomplete uploads, expires old versions, run records and query results, and archives raw CSV', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [
          {
            Id: 'abort-incomplete-multipart-uploads',
            Status: 'Enabled',
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
          Match.objectLike({ Id: 'expire-noncurrent-versions', NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
          Match.objectLike({ Id: 'expire-run-records', Prefix: 'inventory/_runs/', ExpirationInDays: 400 }),
          Match.objectLike({
            Id: 'archive-raw-csv',
            Prefix: 'inventory/_raw/',
            Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }],
          }),
          Match.objectLike({
            Id: 'expire-athena-results',
            Prefix: 'athena-results/',
            ExpirationInDays: 7,
            NoncurrentVersionExpiration: { NoncurrentDays: 1 },
          }),
        ],
      },
    })
  })

  it('creates the Glue database named in the configuration, located under the prefix', () => {
    template.hasResourceProperties('AWS::Glue::Database', {
      CatalogId: { Ref: 'AWS::AccountId' },
      DatabaseInput: Match.objectLike({
        Name: 'inventory',
        LocationUri: {
          'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^WarehouseBucket') }, '/inventory/']],
        },
      }),
    })
  })

  it('creates an Athena workgroup that enforces its encrypted result location and scan limit', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'inventory',
      State: 'ENABLED',
      WorkGroupConfiguration: Match.objectLike({
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 10 * 1024 ** 3,
        PublishCloudWatchMetricsEnabled: true,
        ResultConfiguration: {
          OutputLocation: {
            'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^WarehouseBucket') }, '/athena-results/']],
          },
          EncryptionConfiguration: { EncryptionOption: 'SSE_S3' },
          ExpectedBucketOwner: { Ref: 'AWS::AccountId' },
        },
      }),
    })
  })

  it('saves the configured named queries, then those of every table (in its nested stack), on dt and lineage columns only', () => {
    template.resourceCountIs('AWS::Athena::NamedQuery', 3 * 3 + 1)
    const queries = resourcesOfType(template, 'AWS::Athena::NamedQuery').map(([, query]) => query)
    const names = queries.map((query) => query.Name as string)
    expect(names[0]).toBe('devices: latest inventory by operating system')
    expect(names.slice(1).sort()).toEqual(
      [
        'devices: rows per export date',
        'devices: sample of the latest export',
        'devices: days exported',
        'installed_software: rows per export date',
        'installed_software: sample of the latest export',
        'installed_software: days exported',
        'users: rows per export date',
        'users: sample of the latest export',
        'users: days exported',
      ].sort(),
    )
    for (const query of queries) {
      expect(query.WorkGroup).toEqual({ Ref: expect.stringMatching(/^WarehouseWorkgroup/) })
      expect(query.Database).toEqual({ Ref: expect.stringMatching(/^WarehouseDatabase/) })
    }
    const sql = (name: string) => queries.find((query) => query.Name === name)?.QueryString
    expect(sql('installed_software: sample of the latest export')).toMatch(
      /FROM installed_software_latest\nORDER BY _source_row_number/,
    )
    expect(sql('devices: latest inventory by operating system')).toMatch(/FROM devices_latest/)
  })
})

describe('the warehouse with an existing bucket and other names', () => {
  it('writes to the named bucket and creates no bucket of its own', () => {
    const input = sampleWith({
      warehouse: { prefix: 'exports/inventory', glueDatabase: 'assets' },
      deployment: {
        ...(sampleConfigInput().deployment as object),
        bucket: { name: 'acme-data-lake' },
        athena: { workgroup: 'asset-analysts', bytesScannedCutoffPerQuery: 1024 ** 3 },
      },
    })
    const { template } = synthesize(input)
    template.resourceCountIs('AWS::S3::Bucket', 0)
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: Match.objectLike({ Name: 'assets' }) })
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'asset-analysts',
      WorkGroupConfiguration: Match.objectLike({
        BytesScannedCutoffPerQuery: 1024 ** 3,
        ResultConfiguration: Match.objectLike({ OutputLocation: 's3://acme-data-lake/athena-results/' }),
      }),
    })
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ WAREHOUSE_BUCKET: 'acme-data-lake' }) },
    })
  })
})

describe('the generated named queries', () => {
  it('name no column but dt and the lineage columns', () => {
    const sql = tableQueries('computers')
      .map((q) => q.sql)
      .join('\n')
      .replace(/^--.*$/gm, '')
    const identifiers = new Set(sql.match(/\b[a-z_][a-z0-9_]*\b/g))
    const keywords = [
      'select',
      'count',
      'as',
      'max',
      'from',
      'group',
      'by',
      'order',
      'desc',
      'limit',
      'distinct',
      'min',
    ]
    const columns = [...identifiers].filter((word) => !keywords.includes(word))
    expect(columns.sort()).toEqual(
      [
        '_export_run_id',
        '_exported_at',
        '_source_row_number',
        'computers',
        'computers_latest',
        'days',
        'dt',
        'export_run_id',
        'exported_at',
        'first_day',
        'last_day',
        'row_count',
      ].sort(),
    )
  })

  it.each(['Devices', 'devices; DROP TABLE x', '1devices'])('refuse the table name %j', (table) => {
    expect(() => tableQueries(table)).toThrow(/table .* is not a plain Athena identifier/)
  })
})
