/** Formatting of demo values the way the inventory service writes them into a CSV. */
import type { Random } from './prng.ts'

const DAY_MS = 86_400_000

/** The demo data's "now": fixed, so a seed gives the same bytes on every day the tests run. */
export const DEMO_NOW_MS = Date.UTC(2026, 10, 20, 9, 0, 0)

const pad2 = (n: number): string => String(n).padStart(2, '0')

/** `YYYY-MM-DD` of a UTC instant. */
export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** `2026-11-20T08:15:42Z`: whole seconds, UTC designator. */
export const isoTimestampZ = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`

/** `2026-10-01T12:00:00+02:00`: the wall-clock time at that offset, with the offset spelled out. */
export const isoTimestampWithOffset = (ms: number, offsetMinutes: number): string => {
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19)
  return `${local}${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
}

/** A whole-second instant between two ISO dates (inclusive start, exclusive end). */
export const instantBetween = (random: Random, from: string, to: string): number => {
  const start = Date.parse(from)
  const seconds = Math.floor((Date.parse(to) - start) / 1000)
  return start + random.int(0, seconds - 1) * 1000
}

/** A whole-second instant in the `days` before DEMO_NOW_MS. */
export const instantWithinDays = (random: Random, days: number): number =>
  DEMO_NOW_MS - random.int(0, days * 86_400 - 1) * 1000

/** Midnight UTC `years` after the given date, for warranty ends. */
export const addYears = (ms: number, years: number): number => {
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear() + years, date.getUTCMonth(), date.getUTCDate())
}

/** Rounds down to midnight UTC. */
export const startOfDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS

/** A decimal with exactly two fraction digits, as prices are written (`1234.50`). */
export const money = (value: number): string => value.toFixed(2)

/** Zero-padded numeric id, the service's way of writing asset ids (`000417`). */
export const paddedId = (n: number, width = 6): string => String(n).padStart(width, '0')
