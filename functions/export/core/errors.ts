/**
 * Coded errors, one import for their users. Every failure the exporter reports is one of these (see
 * errors/export-error.ts); they are grouped by what failed: the user's input (errors/config-errors.ts), the service
 * (errors/service-errors.ts), the data (errors/data-errors.ts) and the run (errors/run-errors.ts). Only re-exports.
 */
export * from './errors/codes.ts'
export * from './errors/config-errors.ts'
export * from './errors/data-errors.ts'
export * from './errors/export-error.ts'
export * from './errors/run-errors.ts'
export * from './errors/service-errors.ts'
