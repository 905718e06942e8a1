/**
 * The Glue catalog, loaded when first asked for: the front door offers it to the CLI's `--glue-database` without
 * loading the AWS SDK into every local export (test/integration/cli-footprint.test.ts).
 */
export const loadGlueTableCatalog = async () => (await import('./glue.ts')).glueTableCatalog
