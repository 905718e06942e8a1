/** The emulator's public API. */
export type { Wait } from './body-writer.ts'
export * from './data.ts'
export { EmulatorError, EmulatorErrorCode } from './errors.ts'
export { ANY_TARGET, type Fault, type FaultKind, type FaultScript } from './faults.ts'
export { type EmulatorOptions, type RecordedRequest, type RunningEmulator, startInventoryEmulator } from './server.ts'
export type { UpstreamChange, UpstreamChangeScript } from './upstream-changes.ts'
