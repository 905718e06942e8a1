import { describe, expect, it } from 'vitest'
import { REDACTED_TOKEN, tokenEcho } from '../../../functions/export/source/token-echo.ts'

const TOKEN = 'tok-0123456789abcdef'

describe('tokenEcho', () => {
  it('replaces every occurrence of the token in a text', () => {
    expect(tokenEcho(TOKEN).redact(`a ${TOKEN} b ${TOKEN}`)).toBe(`a ${REDACTED_TOKEN} b ${REDACTED_TOKEN}`)
  })

  it.each([
    ['UTF-8', Buffer.from(`x,${TOKEN}\n`)],
    ['UTF-16LE', Buffer.from(`x,${TOKEN}\n`, 'utf16le')],
    ['UTF-16BE', Buffer.from(`x,${TOKEN}\n`, 'utf16le').swap16()],
  ])('finds the token in %s, whichever byte the body is split at', (_encoding, body) => {
    for (let at = 0; at <= body.length; at++) {
      const scan = tokenEcho(TOKEN).scanner()
      expect([scan(body.subarray(0, at)), scan(body.subarray(at))].some(Boolean), `split at ${at}`).toBe(true)
    }
  })

  it('finds it spread over many one-byte chunks, and not in a body without it', () => {
    const scan = tokenEcho(TOKEN).scanner()
    expect([...Buffer.from(`a,${TOKEN}`)].map((byte) => scan(Buffer.from([byte]))).some(Boolean)).toBe(true)
    const clean = tokenEcho(TOKEN).scanner()
    expect(clean(Buffer.from(`a,${TOKEN.slice(0, -1)}\n`))).toBe(false)
  })

  it('leaves a token too short to look for alone', () => {
    const echo = tokenEcho('abc')
    expect(echo.redact('abc')).toBe('abc')
    expect(echo.scanner()(Buffer.from('abc'))).toBe(false)
  })
})
