/**
 * How the demo inventory changes from day to day, so `<table>_changes` has something to show: from the day after
 * DEMO_NOW_MS, devices are retired and bought, some move to a newer OS, and software is installed and removed.
 * Everything is a pure function of the seed, the row and the day, so a date always gives the same table and the
 * tables of consecutive dates differ by a few rows. Day 0 (the default, and any date up to 2026-11-20) is the
 * table as it always was.
 */
import { DEMO_NOW_MS } from './demo-format.ts'
import { mixSeed } from './prng.ts'

/** Days over which the base rows' retirements, upgrades and removals are spread. */
export const CHANGE_DAYS = 60

/** Whole days from DEMO_NOW_MS's date to `date` (YYYY-MM-DD); 0 for dates before it or no date. */
export const demoDay = (date: string | undefined): number => {
  if (date === undefined) return 0
  const start = Date.UTC(
    new Date(DEMO_NOW_MS).getUTCFullYear(),
    new Date(DEMO_NOW_MS).getUTCMonth(),
    new Date(DEMO_NOW_MS).getUTCDate(),
  )
  return Math.max(0, Math.floor((Date.parse(`${date}T00:00:00Z`) - start) / 86_400_000))
}

/** A 32-bit hash of the seed and a name: the dice for one row or day, independent of every other. */
export const dice = (seed: number, name: string): number => {
  // murmur3's finalizer: mixSeed alone leaves the low bits of similar names alike.
  let h = mixSeed(seed, name)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The day (1..CHANGE_DAYS) on which an event happens to one in `oneIn` rows, or undefined. */
export const eventDay = (seed: number, name: string, oneIn: number): number | undefined => {
  const roll = dice(seed, name)
  return roll % oneIn === 0 ? 1 + (Math.floor(roll / oneIn) % CHANGE_DAYS) : undefined
}

/** Rows added on each day 1..`day`, `min` to `min + spread - 1` a day; the total. */
export const rowsAddedBy = (seed: number, name: string, day: number, min: number, spread: number): number => {
  let total = 0
  for (let d = 1; d <= day; d++) total += min + (dice(seed, `${name}-${d}`) % spread)
  return total
}

/** The newer operating system (name and version) a device of the old one upgrades to. */
export const OS_UPGRADES: Readonly<Record<string, readonly [string, string]>> = {
  'Windows 10 Pro': ['Windows 11 Enterprise', '10.0.26100'],
  'Windows 11 Enterprise': ['Windows 11 Enterprise', '10.0.26200'],
  'macOS Sonoma': ['macOS Sequoia', '15.1'],
  'Windows Server 2022 Datacenter': ['Windows Server 2025 Datacenter', '10.0.26100'],
  'Red Hat Enterprise Linux': ['Red Hat Enterprise Linux', '9.5'],
  Ubuntu: ['Ubuntu', '24.04.1'],
}
