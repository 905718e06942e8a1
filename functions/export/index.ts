/**
 * The export's front door: what the local CLI (`functions/local/`) and the CDK app (`infra/`) use of the runtime.
 * Only re-exports. Nothing above `functions/export/` imports any other of its modules (a test checks), so what is
 * not named here is free to change. The Lambda's own entry point is `handler.ts`, bundled on its own.
 */

export {
  athenaTableDefinition,
  companionTables,
  createTableDdl,
  createViewDdl,
  tableViews,
} from './catalog/athena.ts'
export { assertGlueAccepts, glueTableInputs } from './catalog/glue-inputs.ts'
export { loadGlueTableCatalog } from './catalog/glue-loader.ts'
export { decodePrestoView } from './catalog/presto-view.ts'
export type { TableCatalog } from './catalog/table-catalog.ts'
// "did you mean": the local CLI suggests flags and commands as the configuration suggests keys.
export { closestKey } from './core/config/key-suggestions.ts'
// The vocabulary every side shares: configuration, constants, coded errors.
export * from './core/config.ts'
export * from './core/constants.ts'
export { type Environment, PSEUDONYMIZATION_KEY_VARIABLE, processEnvironment } from './core/environment.ts'
export * from './core/errors.ts'
export { exportDateProblem } from './core/export-date.ts'
export { isLineageColumn } from './core/lineage.ts'
export { printable, printableJson } from './core/printable.ts'
export { PseudonymizationKey, refuseKeyAsToken } from './core/pseudonymization-key.ts'
export type { ErasedRowsRecord, RunRecord, TableOutcome } from './core/run-record.ts'
export { DEFAULT_STACK_NAME, stackResourceNames } from './core/stack-names.ts'
export { describeGuards } from './guards/guards.ts'
// The state machine's input for an erasure request on AWS (`npm run erase -- --aws-event`).
export {
  DEFAULT_BATCH_DATES,
  eraseEvent,
  MAX_BATCH_DATES,
  MAX_HISTORY_EVENT_BYTES,
  rewriteEvent,
} from './lambda/history-event.ts'
export { type ConvertResult, convertTable } from './path/convert.ts'
// Running an export (the CLI; the Lambda does the same through handler.ts).
export { type ErasureCondition, type ErasureResult, eraseRows, type ValueCondition } from './path/erase.ts'
export { localIcebergFiles } from './path/layout-of.ts'
export { type RewriteOptions, type RewriteResult, type RewrittenDate, rewriteHistory } from './path/rewrite.ts'
export { runExport } from './path/run.ts'
export { type LatestOutcome, latestOutcomeKey } from './path/run-index.ts'
export { type PreviewOptions, previewTable, type TablePreview } from './path/table-preview.ts'
export { type RetryEvent, RUN_STARTED, type RunTelemetry, type TableProgress } from './path/telemetry.ts'
export { FolderWarehouseStore } from './publish/fs.ts'
// The CLI's `--out s3://...` writes through the Lambda's store, loaded only then.
export { loadS3WarehouseStore } from './publish/s3-loader.ts'
export type { WarehouseStore } from './publish/store.ts'
// Deployment: the names the stack gives its resources.
// The warehouse as analysts see it: the registry, the Athena definitions and the Glue inputs made from them.
export {
  type ErasureRequest,
  forgetErasureRequest,
  isErasureRequestId,
  listErasureRequests,
} from './schema/erasure-requests.ts'
export { readTableSchema } from './schema/registry.ts'
export { storedDates } from './schema/retention.ts'
export { archiveSource } from './source/archive-source.ts'
export { readCaCertificates } from './source/ca-certificates.ts'
export { serviceSource } from './source/service-source.ts'
export type { TableBytes, TableSource } from './source/table-source.ts'
export { checkTokenCharacters } from './source/token.ts'
