/** The embedded default of `npm start`: the stand-in service with demo data on a free loopback port. */
import { DEMO_TOKEN, DemoTableId, demoTables, startInventoryEmulator } from '../../emulator/index.ts'

/** Demo tables and the names analysts see them under. */
const DEMO_TABLES = [
  { id: DemoTableId.DEVICES, name: 'devices', key: ['device_id'] },
  // The stand-in lists a title once per device, so the demo runs without a repeated-key warning.
  { id: DemoTableId.SOFTWARE, name: 'installed_software', key: ['device_id', 'software_name'] },
  { id: DemoTableId.USERS, name: 'users', key: ['user_id'] },
  { id: DemoTableId.PAYROLL, name: 'payroll_devices', key: ['device_id'] },
] as const

export interface DemoService {
  readonly baseUrl: string
  readonly token: string
  readonly configInput: { source: { baseUrl: string }; tables: { id: string; name: string; key: string[] }[] }
  close(): Promise<void>
}

/** The stand-in serving the demo tables as they are on `date` (they change from day to day). */
export const startDemoService = async (date?: string): Promise<DemoService> => {
  const emulator = await startInventoryEmulator({ tables: demoTables(date === undefined ? {} : { date }) })
  return {
    baseUrl: emulator.baseUrl,
    token: DEMO_TOKEN,
    configInput: { source: { baseUrl: emulator.baseUrl }, tables: DEMO_TABLES.map((t) => ({ ...t, key: [...t.key] })) },
    close: () => emulator.close(),
  }
}
