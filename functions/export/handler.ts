/** Lambda entry point: scheduled event + context -> run(), with AWS dependencies. (Being written.) */
import type { Context } from 'aws-lambda'

export interface ScheduledExportEvent {
  /** Narrow the run to these table ids or names. */
  readonly tables?: readonly string[]
}

export const handler = async (_event: ScheduledExportEvent, _context: Context): Promise<never> => {
  throw new Error('not implemented yet')
}
