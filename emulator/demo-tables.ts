/** The demo saved tables, generated lazily and deterministically from a seed. */
import { demoDay } from './demo-changes.ts'
import { DEVICE_COLUMNS, deviceRows } from './demo-devices.ts'
import { SOFTWARE_COLUMNS, softwareRows } from './demo-software.ts'
import { USER_COLUMNS, userRows } from './demo-users.ts'
import { EmulatorError, EmulatorErrorCode } from './errors.ts'
import { mixSeed } from './prng.ts'
import { DemoTableId, type SavedTable } from './tables.ts'

export type DemoRowCounts = Partial<Record<'devices' | 'software' | 'users', number>>

export interface DemoTablesOptions {
  /** @default 1 */
  readonly seed?: number
  /** Row counts of the big demo tables. @default { devices: 2500, software: 10000, users: 800 } */
  readonly rows?: DemoRowCounts
  /**
   * The day the tables show (YYYY-MM-DD): from 2026-11-21 on, devices are retired, bought and upgraded and software
   * is installed and removed, a few rows a day (see demo-changes.ts). @default the tables as of 2026-11-20
   */
  readonly date?: string
}

export const DEFAULT_DEMO_SEED = 1
export const DEFAULT_DEMO_ROWS = { devices: 2_500, software: 10_000, users: 800 } as const
const RETIRED_ROWS = 60
const PAYROLL_ROWS = 120

const checkOptions = (seed: number, rows: DemoRowCounts, date: string | undefined): void => {
  const problems: string[] = []
  if (!Number.isSafeInteger(seed)) problems.push(`seed must be an integer, got ${seed}`)
  if (date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(date)) problems.push(`date must be YYYY-MM-DD, got ${date}`)
  for (const [name, count] of Object.entries(rows)) {
    if (!(name in DEFAULT_DEMO_ROWS)) problems.push(`rows.${name} is not a demo table (devices, software, users)`)
    else if (!Number.isSafeInteger(count) || (count ?? 0) < 0) {
      problems.push(`rows.${name} must be a non-negative integer, got ${count}`)
    }
  }
  if (problems.length > 0) {
    throw new EmulatorError(EmulatorErrorCode.OPTIONS_INVALID, `invalid demoTables() options: ${problems.join('; ')}`)
  }
}

/** Fresh demo tables; rows are produced on each export, so millions of rows cost no memory. */
export const demoTables = (options: DemoTablesOptions = {}): SavedTable[] => {
  const { seed = DEFAULT_DEMO_SEED, rows = {}, date } = options
  const day = demoDay(date)
  checkOptions(seed, rows, date)
  const devices = rows.devices ?? DEFAULT_DEMO_ROWS.devices
  const software = rows.software ?? DEFAULT_DEMO_ROWS.software
  const users = rows.users ?? DEFAULT_DEMO_ROWS.users
  const seedOf = (id: string): number => mixSeed(seed, id)
  return [
    {
      id: DemoTableId.DEVICES,
      title: 'Devices',
      columns: DEVICE_COLUMNS,
      rows: () => deviceRows(seedOf(DemoTableId.DEVICES), devices, day),
    },
    {
      id: DemoTableId.SOFTWARE,
      title: 'Installed Software',
      columns: SOFTWARE_COLUMNS,
      rows: () => softwareRows(seedOf(DemoTableId.SOFTWARE), software, devices, day),
    },
    {
      id: DemoTableId.USERS,
      title: 'Users',
      columns: USER_COLUMNS,
      rows: () => userRows(seedOf(DemoTableId.USERS), users),
    },
    {
      id: DemoTableId.RETIRED,
      title: 'Retired Assets',
      exportEnabled: false,
      columns: DEVICE_COLUMNS,
      rows: () => deviceRows(seedOf(DemoTableId.RETIRED), RETIRED_ROWS),
    },
    {
      id: DemoTableId.PAYROLL,
      title: 'Payroll Devices',
      columns: DEVICE_COLUMNS,
      rows: () => deviceRows(seedOf(DemoTableId.PAYROLL), PAYROLL_ROWS),
    },
  ]
}
