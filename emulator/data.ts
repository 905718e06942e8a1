/** The emulator's data: demo users, tokens and saved tables. */
export {
  DEFAULT_DEMO_ROWS,
  DEFAULT_DEMO_SEED,
  type DemoRowCounts,
  type DemoTablesOptions,
  demoTables,
} from './demo-tables.ts'
export {
  type CsvFileTable,
  DemoTableId,
  type GeneratedTable,
  isCsvFileTable,
  isRawCsvTable,
  type RawCsvTable,
  type Row,
  type SavedTable,
} from './tables.ts'
export { DEMO_TOKEN, DEMO_TOKENS, DEMO_USERS, type EmulatorUser, UserStatus } from './users.ts'
