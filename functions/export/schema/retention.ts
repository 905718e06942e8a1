/**
 * Retention: which export dates a table keeps (pure: `retainedDates`), and removing the others from the store
 * (`expireDates`). A date goes in an order that keeps every date still shown right whenever a run stops: first the
 * dates relation is rewritten without it (so the oldest kept date has no previous date, and `<table>_changes`
 * shows nothing for it rather than every row added), then the date's entry in the relation, its data object and
 * its raw bodies. Each step is a one-object put or delete that can be repeated, so a rerun finishes the work.
 */

import type { RetentionConfig } from '../core/config.ts'
import { PARTITION_KEY, RAW_FOLDER } from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { hiveLayout, type TableLayout } from '../publish/table-layout.ts'
import { forgetExportDates, listExportDates } from './export-dates.ts'

const DAY_MS = 24 * 60 * 60 * 1000

const dayNumber = (date: string): number => Date.parse(`${date}T00:00:00Z`) / DAY_MS

/**
 * The dates kept under `retention`, sorted: those less than `days` days before the newest date, and with
 * `monthly` the first date of each of the last `monthly` calendar months (the newest date's month included).
 */
export const retainedDates = (dates: readonly string[], retention: RetentionConfig): string[] => {
  const sorted = [...new Set(dates)].sort()
  const newest = sorted.at(-1)
  if (retention === false || newest === undefined) return sorted
  const kept = new Set(sorted.filter((date) => dayNumber(newest) - dayNumber(date) < retention.days))
  if (retention.monthly !== undefined) {
    const [year, month] = newest.split('-').map(Number) as [number, number]
    const newestMonth = year * 12 + (month - 1)
    const firstOfMonth = new Map<string, string>()
    for (const date of sorted) {
      const [y, m] = date.split('-').map(Number) as [number, number]
      if (newestMonth - (y * 12 + (m - 1)) < retention.monthly && !firstOfMonth.has(date.slice(0, 7))) {
        firstOfMonth.set(date.slice(0, 7), date)
      }
    }
    for (const date of firstOfMonth.values()) kept.add(date)
  }
  return sorted.filter((date) => kept.has(date))
}

/** The table's export dates as the store holds them: its data objects and its dates relation together. */
export const storedDates = async (
  store: WarehouseStore,
  table: string,
  layout: TableLayout = hiveLayout(store, table),
): Promise<string[]> => {
  const dates = new Set([...(await listExportDates(store, table)), ...(await layout.dates())])
  return [...dates].sort()
}

export interface ExpiredDates {
  /** The dates removed by this call, sorted (empty when nothing was past the retention). */
  readonly dates: readonly string[]
  /** Objects deleted: data objects, entries of the dates relation and raw bodies. */
  readonly objects: number
}

/** Removes every date of `table` that `retention` no longer keeps; `onDate` is told each date as it goes. */
export const expireDates = async (
  store: WarehouseStore,
  table: string,
  retention: RetentionConfig,
  onDate: (date: string) => void = () => undefined,
  layout: TableLayout = hiveLayout(store, table),
): Promise<ExpiredDates> => {
  if (retention === false) return { dates: [], objects: 0 }
  const dates = await storedDates(store, table, layout)
  const kept = new Set(retainedDates(dates, retention))
  const expired = dates.filter((date) => !kept.has(date))
  if (expired.length === 0) return { dates: [], objects: 0 }
  let objects = await forgetExportDates(store, table, expired)
  for (const date of expired) {
    onDate(date)
    objects += await layout.removeDates([date])
    for (const key of await store.listKeys(`${RAW_FOLDER}/${table}/${PARTITION_KEY}=${date}/`)) {
      await store.deleteObject(key)
      objects++
    }
  }
  return { dates: expired, objects }
}
