/**
 * The configuration, one import for its users: the schema (config/schema.ts, a table's part in
 * config/table-schema.ts), parsing it into a typed object or a ConfigError (config/parse.ts), the one file reader (config/load.ts), the check of the tables a run asks for (config/table-selection.ts), and the "did you mean"
 * for unknown keys (config/key-suggestions.ts). Only re-exports.
 */
export * from './config/load.ts'
export * from './config/parse.ts'
export * from './config/schema.ts'
export * from './config/table-schema.ts'
export * from './config/table-selection.ts'
