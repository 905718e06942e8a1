import { describe, expect, it } from 'vitest'
import { parseTokenSecret } from '../../../functions/export/source/token.ts'

const SOURCE = 'secret inventory/token'

describe('a token that cannot be sent as an HTTP header', () => {
  it.each([
    ['a line break', 'abc\nCANARY'],
    ['a control character', 'abc\u0001CANARY'],
    ['a line break inside the JSON form', JSON.stringify({ token: 'abc\rCANARY' })],
  ])('is a TOKEN_UNAVAILABLE configuration error for %s, naming the position and not the token', (_what, value) => {
    const error = (() => {
      try {
        parseTokenSecret(value, SOURCE)
      } catch (thrown) {
        return thrown as Error & { code: string; retryable: boolean }
      }
      throw new Error('expected a failure')
    })()
    expect(error).toMatchObject({ code: 'TOKEN_UNAVAILABLE', retryable: false })
    expect(error.message).toContain(`${SOURCE}: character 4 of the token cannot be sent in an HTTP header`)
    expect(error.message).not.toContain('CANARY')
  })

  it('leaves a token of printable characters as it is', () => {
    expect(parseTokenSecret(' abc-DEF_123.456 \n', SOURCE)).toEqual({ token: 'abc-DEF_123.456' })
  })
})
