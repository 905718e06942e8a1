/** Coded errors of the emulator: misuse by a test or by the command line, never a simulated server failure. */

export const EmulatorErrorCode = {
  /** A fault passed to `faults.script()` or `faults.always()` is malformed. */
  FAULT_INVALID: 'EMULATOR_FAULT_INVALID',
  /** Options of `demoTables()` or `startInventoryEmulator()` are malformed. */
  OPTIONS_INVALID: 'EMULATOR_OPTIONS_INVALID',
  /** Bad command-line flags. */
  USAGE_INVALID: 'EMULATOR_USAGE_INVALID',
  /** The address to listen on is taken or not allowed. */
  LISTEN_FAILED: 'EMULATOR_LISTEN_FAILED',
} as const
export type EmulatorErrorCode = (typeof EmulatorErrorCode)[keyof typeof EmulatorErrorCode]

export class EmulatorError extends Error {
  readonly code: EmulatorErrorCode

  constructor(code: EmulatorErrorCode, message: string) {
    super(message)
    this.name = 'EmulatorError'
    this.code = code
  }
}
