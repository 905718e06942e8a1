/** Runs a command as a child process and reports its wall time and peak resident memory (Linux /proc). */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'

export interface ChildMeasurement {
  readonly seconds: number
  readonly peakRssBytes: number
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

const peakRss = (pid: number): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1]
    return kb === undefined ? 0 : Number(kb) * 1024
  } catch {
    return 0
  }
}

export const measureChild = (
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ChildMeasurement> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let peak = 0
    // VmHWM is the high-water mark, so sampling it now and then loses nothing but the last moments.
    const timer = setInterval(() => {
      if (child.pid !== undefined) peak = Math.max(peak, peakRss(child.pid))
    }, 25)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => {
      err.push(chunk)
      if (child.pid !== undefined) peak = Math.max(peak, peakRss(child.pid))
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      clearInterval(timer)
      resolve({
        seconds: (performance.now() - started) / 1000,
        peakRssBytes: peak,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code ?? 1,
      })
    })
  })
