/**
 * The S3 store, loaded when first asked for: the front door offers it to the CLI's `--out s3://...` without loading
 * the AWS SDK into every local export, which writes to a folder (test/integration/cli-footprint.test.ts).
 */
export const loadS3WarehouseStore = async () => (await import('./s3.ts')).S3WarehouseStore
