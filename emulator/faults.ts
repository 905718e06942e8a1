/**
 * Scriptable failures. A fault is chosen per request, by target: 'me', 'apidoc', a table id, or '*'.
 * Precedence for one request: the target's script, then the '*' script, then the target's `always`,
 * then the '*' `always`; each request consumes at most one scripted fault.
 */
import { EmulatorError, EmulatorErrorCode } from './errors.ts'

export type Fault =
  /** Any status, with an optional body (default: JSON `{ error }`), Retry-After (seconds or HTTP date) and headers. */
  | { kind: 'status'; status: number; body?: string; retryAfter?: string; headers?: Record<string, string> }
  /** Latency before the response headers, then the normal response. */
  | { kind: 'delay'; ms: number }
  /** Headers (+ the full Content-Length when advertiseLength), the first N body bytes, then the socket is destroyed. */
  | { kind: 'truncate'; afterBytes: number; advertiseLength?: boolean }
  /** N body bytes, then silence for `ms`, then the rest of the normal response. */
  | { kind: 'stall'; afterBytes: number; ms: number }
  /** The socket is destroyed: before the headers when afterBytes is undefined, else after N body bytes. */
  | { kind: 'reset'; afterBytes?: number }
  /** 200 text/html login page instead of the export. */
  | { kind: 'html200' }
  /** 200 application/json error object instead of the export. */
  | { kind: 'json200' }
  /** 200 text/csv with an empty body. */
  | { kind: 'empty200' }
  /**
   * The normal response with neither Content-Length nor chunked encoding (`Connection: close`): its end is the
   * socket's end, so a cut body looks complete. `afterBytes` cuts it there, still looking complete.
   */
  | { kind: 'unframed'; afterBytes?: number }
  /** N body bytes, then one byte every `everyMs`: never silent for long, never done. */
  | { kind: 'trickle'; afterBytes: number; everyMs: number }

export type FaultKind = Fault['kind']

/** Faults that act on the bytes of an otherwise normal response. */
export type BodyFault = Extract<Fault, { kind: 'truncate' | 'stall' | 'reset' }>

export const ANY_TARGET = '*'

export interface FaultScript {
  /** Queue faults for the next requests to `target` ('me', a table id, or '*' for any request); each request consumes one; afterwards requests are normal. */
  script(target: string, faults: readonly Fault[]): void
  /** Apply the fault to every request to `target` until cleared. */
  always(target: string, fault: Fault): void
  clear(): void
}

const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0

/** Why a fault is malformed, or undefined when it is fine. */
const problemOf = (fault: Fault): string | undefined => {
  switch (fault.kind) {
    case 'status':
      return Number.isInteger(fault.status) && fault.status >= 200 && fault.status <= 599
        ? undefined
        : `status must be an integer from 200 to 599, got ${fault.status}`
    case 'delay':
      return isCount(fault.ms) ? undefined : `ms must be a non-negative integer, got ${fault.ms}`
    case 'truncate':
      return isCount(fault.afterBytes)
        ? undefined
        : `afterBytes must be a non-negative integer, got ${fault.afterBytes}`
    case 'stall':
      if (!isCount(fault.afterBytes)) return `afterBytes must be a non-negative integer, got ${fault.afterBytes}`
      return isCount(fault.ms) ? undefined : `ms must be a non-negative integer, got ${fault.ms}`
    case 'reset':
      return fault.afterBytes === undefined || isCount(fault.afterBytes)
        ? undefined
        : `afterBytes must be a non-negative integer or undefined, got ${fault.afterBytes}`
    case 'trickle':
      if (!isCount(fault.afterBytes)) return `afterBytes must be a non-negative integer, got ${fault.afterBytes}`
      return isCount(fault.everyMs) ? undefined : `everyMs must be a non-negative integer, got ${fault.everyMs}`
    case 'unframed':
      return fault.afterBytes === undefined || isCount(fault.afterBytes)
        ? undefined
        : `afterBytes must be a non-negative integer or undefined, got ${fault.afterBytes}`
    case 'html200':
    case 'json200':
    case 'empty200':
      return undefined
    default:
      return `unknown kind ${JSON.stringify((fault as { kind: unknown }).kind)}`
  }
}

const checkFault = (target: string, fault: Fault): void => {
  const problem = problemOf(fault)
  if (problem !== undefined) {
    throw new EmulatorError(
      EmulatorErrorCode.FAULT_INVALID,
      `fault ${JSON.stringify(fault)} for "${target}": ${problem}`,
    )
  }
}

/** The emulator's FaultScript, plus `take()` for the server. */
export class FaultQueue implements FaultScript {
  readonly #scripted = new Map<string, Fault[]>()
  readonly #always = new Map<string, Fault>()

  script(target: string, faults: readonly Fault[]): void {
    for (const fault of faults) checkFault(target, fault)
    const queue = this.#scripted.get(target) ?? []
    queue.push(...faults)
    this.#scripted.set(target, queue)
  }

  always(target: string, fault: Fault): void {
    checkFault(target, fault)
    this.#always.set(target, fault)
  }

  clear(): void {
    this.#scripted.clear()
    this.#always.clear()
  }

  /** The fault for one request to `target` (undefined for paths that name none), consuming a scripted one. */
  take(target: string | undefined): Fault | undefined {
    const targets = target === undefined ? [ANY_TARGET] : [target, ANY_TARGET]
    for (const name of targets) {
      const fault = this.#scripted.get(name)?.shift()
      if (fault !== undefined) return fault
    }
    for (const name of targets) {
      const fault = this.#always.get(name)
      if (fault !== undefined) return fault
    }
    return undefined
  }
}

export const isBodyFault = (fault: Fault): fault is BodyFault =>
  (fault.kind === 'truncate' || fault.kind === 'stall' || fault.kind === 'reset') &&
  !(fault.kind === 'reset' && fault.afterBytes === undefined)
