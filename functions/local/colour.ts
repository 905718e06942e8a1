/**
 * Colour for the status words a person scans for (ok, FAILED, HELD, NOT READY), on a terminal only: piped output
 * stays plain text for other programs, and NO_COLOR (https://no-color.org) or TERM=dumb switches it off.
 */
import type { Environment } from '../export/index.ts'

export const Tone = { GOOD: 'good', BAD: 'bad', HELD: 'held' } as const
export type Tone = (typeof Tone)[keyof typeof Tone]

const SGR: Readonly<Record<Tone, string>> = { good: '32', bad: '1;31', held: '1;33' }

/** Whether a stream gets colour: a TTY, with neither NO_COLOR (set and not empty) nor TERM=dumb. */
export const colourEnabled = (stream: { readonly isTTY?: boolean }, env: Environment): boolean =>
  stream.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb'

/** `text` in the tone's colour when `enabled`, else unchanged. */
export const paint = (text: string, tone: Tone, enabled: boolean): string =>
  enabled ? `\x1b[${SGR[tone]}m${text}\x1b[0m` : text

/** The tone of a status word of the summary, check or progress lines. */
export const toneOf = (status: string): Tone =>
  status.startsWith('ok') || status.startsWith('OK') ? Tone.GOOD : status.startsWith('HELD') ? Tone.HELD : Tone.BAD
