/**
 * The watchdog ends a run whose event loop is starved past the deadline (no timer of its own could), with a coded
 * line on stderr, and leaves a run that is merely past its deadline but responsive alone. Each run is a child
 * process: the starved one would otherwise freeze the test runner.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SCRIPT = path.resolve(import.meta.dirname, '../../support/starved-loop.ts')

const runChild = (mode: 'starve' | 'idle') =>
  new Promise<{ signal: string | null; killedByTest: boolean; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [SCRIPT, mode], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ signal: error?.signal ?? null, killedByTest: error?.killed ?? false, stdout, stderr }),
    )
  })

describe('the watchdog', () => {
  it('stops a run whose event loop is starved past the deadline, saying why in a coded line', async () => {
    const { signal, killedByTest, stderr } = await runChild('starve')
    expect(killedByTest).toBe(false)
    expect(signal).toBe('SIGKILL')
    const line = JSON.parse(stderr.trim().split('\n').at(-1)!) as { error: Record<string, unknown> }
    expect(line.error).toMatchObject({ code: 'DEADLINE_EXCEEDED', failureClass: 'deadline', retryable: true })
    expect(line.error.message).toMatch(/event loop was starved for \d+ s past the deadline/)
  }, 90_000)

  it('leaves a run alone that is past the deadline but whose event loop still turns', async () => {
    const { signal, stdout } = await runChild('idle')
    expect(signal).toBeNull()
    expect(stdout.trim()).toBe('finished')
  }, 90_000)
})
