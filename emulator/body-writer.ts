/** Writes a response body with backpressure, and acts out truncate/stall/reset faults at a byte offset. */
import type { ServerResponse } from 'node:http'
import type { BodyFault } from './faults.ts'

export interface BodyWriter {
  /** Sends a chunk, waiting while the socket is full; false once the client is gone or a fault ended the response. */
  write(chunk: Uint8Array): Promise<boolean>
  /** Ends the response; a truncate or reset that was not reached yet destroys the socket instead. */
  end(): Promise<void>
}

/** Resolves true once `res` can take more, false if it closes first. */
const drained = (res: ServerResponse): Promise<boolean> =>
  new Promise((resolve) => {
    const finish = (ok: boolean): void => {
      res.off('drain', onDrain)
      res.off('close', onClose)
      resolve(ok)
    }
    const onDrain = (): void => finish(true)
    const onClose = (): void => finish(false)
    res.on('drain', onDrain)
    res.on('close', onClose)
  })

/** How the emulator waits for delay, stall and trickle faults: a timer, unless a test injects its own clock. */
export type Wait = (ms: number) => Promise<void>

/** Waits `ms` (with `wait` when given), or less if the client goes away (so close() never waits for a stall). */
export const pause = (res: ServerResponse, ms: number, wait?: Wait): Promise<void> =>
  new Promise((resolve) => {
    const finish = (): void => {
      clearTimeout(timer)
      res.off('close', finish)
      resolve()
    }
    const timer = wait === undefined ? setTimeout(finish, ms) : undefined
    if (wait !== undefined) void wait(ms).then(finish)
    res.on('close', finish)
  })

/**
 * Resolves once everything written so far has left the process. An empty socket write is a barrier: its
 * callback runs after every earlier write, so destroying the socket afterwards cannot drop those bytes.
 */
const flushed = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    res.flushHeaders()
    const socket = res.socket
    if (socket === null || socket.destroyed) resolve()
    else socket.write('', () => resolve())
  })

const send = async (res: ServerResponse, chunk: Uint8Array): Promise<boolean> => {
  if (res.destroyed) return false
  if (chunk.byteLength === 0 || res.write(chunk)) return true
  return drained(res)
}

/** Sends what was written, then destroys the socket: the client sees the connection end mid-body. */
const cutOff = async (res: ServerResponse): Promise<void> => {
  if (!res.destroyed) await flushed(res)
  res.destroy()
}

export const createBodyWriter = (res: ServerResponse, fault: BodyFault | undefined, wait?: Wait): BodyWriter => {
  let sent = 0
  let faultPending = fault !== undefined
  let ended = false

  const write = async (chunk: Uint8Array): Promise<boolean> => {
    if (ended) return false
    const limit = fault?.afterBytes
    if (!faultPending || fault === undefined || limit === undefined || sent + chunk.byteLength < limit) {
      sent += chunk.byteLength
      return send(res, chunk)
    }
    faultPending = false
    const head = chunk.subarray(0, limit - sent)
    sent += chunk.byteLength
    if (!(await send(res, head))) return false
    if (fault.kind !== 'stall') {
      ended = true
      await cutOff(res)
      return false
    }
    await flushed(res)
    await pause(res, fault.ms, wait)
    return send(res, chunk.subarray(head.byteLength))
  }

  const end = async (): Promise<void> => {
    if (ended || res.destroyed) return
    ended = true
    if (faultPending && fault !== undefined) {
      // The body was shorter than afterBytes: act the fault out at the end of the body.
      if (fault.kind !== 'stall') return cutOff(res)
      await flushed(res)
      await pause(res, fault.ms, wait)
    }
    if (!res.destroyed) res.end()
  }

  return { write, end }
}
