/** The embedded default of `npm start`: the stand-in service with demo data on a free loopback port. */
import { DEMO_TOKEN, DemoTableId, startInventoryEmulator } from '../../emulator/index.ts'

/** Demo tables and the names analysts see them under. */
export const DEMO_TABLES = [
  { id: DemoTableId.DEVICES, name: 'devices' },
  { id: DemoTableId.SOFTWARE, name: 'installed_software' },
  { id: DemoTableId.USERS, name: 'users' },
  { id: DemoTableId.PAYROLL, name: 'payroll_devices' },
] as const

export interface DemoService {
  readonly baseUrl: string
  readonly token: string
  readonly configInput: { source: { baseUrl: string }; tables: { id: string; name: string }[] }
  close(): Promise<void>
}

export const startDemoService = async (): Promise<DemoService> => {
  const emulator = await startInventoryEmulator()
  return {
    baseUrl: emulator.baseUrl,
    token: DEMO_TOKEN,
    configInput: { source: { baseUrl: emulator.baseUrl }, tables: DEMO_TABLES.map((t) => ({ ...t })) },
    close: () => emulator.close(),
  }
}
