/** Telemetry for tests that watch the warehouse, not the run's reports. */
import type { RunTelemetry } from '../../functions/export/path/telemetry.ts'

/** Reports nothing; a base to override only what a caller needs. */
export const silentTelemetry: RunTelemetry = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  tableStarted: () => undefined,
  tableProgress: () => undefined,
  tableFinished: () => undefined,
  retried: () => undefined,
  runFinished: () => undefined,
}
