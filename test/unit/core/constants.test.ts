/**
 * The export's V8 flags (constants.ts) reach every place an export runs outside the Lambda: the npm scripts that
 * move data. The Lambda's NODE_OPTIONS is asserted on the synthesized template (test/infra/exporter.test.ts).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { NODE_RUNTIME_FLAGS } from '../../../functions/export/core/constants.ts'

const scripts = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../../package.json'), 'utf8'))
  .scripts as Record<string, string>

describe('the export runs with the same V8 flags everywhere', () => {
  it.each(['start', 'check', 'reprocess'])('npm run %s passes them to node before the command', (name) => {
    expect(scripts[name]).toMatch(new RegExp(`^node ${NODE_RUNTIME_FLAGS.join(' ')} functions/local/cli\\.mjs `))
  })

  it('they are flags Node accepts in NODE_OPTIONS, where the Lambda carries them', () => {
    expect(NODE_RUNTIME_FLAGS.every((flag) => process.allowedNodeEnvironmentFlags.has(flag.split('=')[0]!))).toBe(true)
  })
})
