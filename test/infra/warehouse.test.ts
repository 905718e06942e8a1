import { Match, type Template } from 'aws-cdk-lib/assertions'
import { beforeAll, describe, expect, it } from 'vitest'
import { analystQueries } from '../../infra/constructs/analyst-queries.ts'
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
          Match.objectLike({ Id: 'expire-athena-results', Prefix: 'athena-results/', ExpirationInDays: 30 }),
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

  it('saves the analyst questions as named queries in the workgroup and database', () => {
    template.resourceCountIs('AWS::Athena::NamedQuery', 3)
    const queries = resourcesOfType(template, 'AWS::Athena::NamedQuery').map(([, query]) => query)
    expect(queries.map((query) => query.Name)).toEqual([
      'Latest inventory by operating system',
      'Devices not seen for 30 days',
      'Device changes between two dates',
    ])
    for (const query of queries) {
      expect(query.WorkGroup).toEqual({ Ref: expect.stringMatching(/^WarehouseWorkgroup/) })
      expect(query.Database).toEqual({ Ref: expect.stringMatching(/^WarehouseDatabase/) })
    }
    expect(queries[0]?.QueryString).toMatch(/FROM devices_latest\b/)
    expect(queries[1]?.QueryString).toMatch(/INTERVAL '30' DAY/)
    expect(queries[2]?.QueryString).toMatch(/FROM devices WHERE CAST\(dt AS varchar\) = '2025-01-01'/)
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

describe('the analyst queries', () => {
  it('use the given table and column names', () => {
    const [byOs, notSeen, changes] = analystQueries({
      devicesTable: 'computers',
      osColumn: 'os',
      lastSeenColumn: 'seen_at',
      notSeenDays: 14,
    })
    expect(byOs?.sql).toContain('FROM computers_latest')
    expect(notSeen?.name).toBe('Devices not seen for 14 days')
    expect(notSeen?.sql).toContain("seen_at < localtimestamp - INTERVAL '14' DAY")
    expect(changes?.sql).toContain('n.os IS DISTINCT FROM o.os')
  })

  it.each(['Devices', 'devices; DROP TABLE x', '1devices'])('refuse the table name %j', (devicesTable) => {
    expect(() => analystQueries({ devicesTable })).toThrow(/devicesTable .* is not a plain Athena identifier/)
  })
})
