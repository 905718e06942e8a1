/** Hardware catalogue of the demo company. Some model names carry commas and inch marks on purpose. */

export const DeviceKind = { LAPTOP: 'lt', DESKTOP: 'pc', SERVER: 'srv', VIRTUAL: 'vm' } as const
export type DeviceKind = (typeof DeviceKind)[keyof typeof DeviceKind]

export interface HardwareModel {
  readonly manufacturer: string
  readonly model: string
  readonly kind: DeviceKind
  readonly ram: readonly number[]
  readonly disk: readonly number[]
  readonly cores: readonly number[]
  /** List price in EUR; 0 for virtual machines. */
  readonly price: number
  /** How the vendor's serial numbers look. */
  readonly serial: 'tag' | 'digits' | 'uuid'
}

const OFFICE_RAM = [8, 16, 32] as const
const OFFICE_DISK = [256, 512, 1024] as const

export const HARDWARE: readonly HardwareModel[] = [
  {
    manufacturer: 'Dell Inc.',
    model: 'Latitude 7440, 14"',
    kind: 'lt',
    ram: OFFICE_RAM,
    disk: OFFICE_DISK,
    cores: [10, 12],
    price: 1649,
    serial: 'tag',
  },
  {
    manufacturer: 'Dell Inc.',
    model: 'OptiPlex 7010 SFF',
    kind: 'pc',
    ram: OFFICE_RAM,
    disk: OFFICE_DISK,
    cores: [6, 10],
    price: 929,
    serial: 'tag',
  },
  {
    manufacturer: 'Lenovo',
    model: 'ThinkPad T14 Gen 4, 14"',
    kind: 'lt',
    ram: [16, 32],
    disk: [512, 1024],
    cores: [10, 12],
    price: 1499,
    serial: 'tag',
  },
  {
    manufacturer: 'Lenovo',
    model: 'ThinkCentre M70q Gen 4',
    kind: 'pc',
    ram: OFFICE_RAM,
    disk: [256, 512],
    cores: [6, 12],
    price: 819,
    serial: 'tag',
  },
  {
    manufacturer: 'HP',
    model: 'EliteBook 840 G10, 14"',
    kind: 'lt',
    ram: [16, 32],
    disk: [512, 1024],
    cores: [10, 12],
    price: 1579,
    serial: 'tag',
  },
  {
    manufacturer: 'Apple Inc.',
    model: 'MacBook Pro 16", M3 Max',
    kind: 'lt',
    ram: [36, 48, 64],
    disk: [1024, 2048],
    cores: [14, 16],
    price: 4299,
    serial: 'tag',
  },
  {
    manufacturer: 'Apple Inc.',
    model: 'MacBook Air 13", M2',
    kind: 'lt',
    ram: [8, 16, 24],
    disk: [256, 512],
    cores: [8],
    price: 1199,
    serial: 'tag',
  },
  {
    manufacturer: 'Microsoft Corporation',
    model: 'Surface Laptop 5, 13.5"',
    kind: 'lt',
    ram: [8, 16],
    disk: [256, 512],
    cores: [10],
    price: 1349,
    serial: 'digits',
  },
  {
    manufacturer: 'Fujitsu',
    model: 'ESPRIMO P758',
    kind: 'pc',
    ram: [8, 16],
    disk: [256, 512],
    cores: [6],
    price: 749,
    serial: 'digits',
  },
  {
    manufacturer: 'Dell Inc.',
    model: 'PowerEdge R750',
    kind: 'srv',
    ram: [128, 256, 512],
    disk: [2048, 4096, 8192],
    cores: [32, 48, 64],
    price: 12890.5,
    serial: 'tag',
  },
  {
    manufacturer: 'HPE',
    model: 'ProLiant DL380 Gen11',
    kind: 'srv',
    ram: [128, 256],
    disk: [2048, 4096],
    cores: [32, 64],
    price: 10990,
    serial: 'digits',
  },
  {
    manufacturer: 'VMware, Inc.',
    model: 'VMware Virtual Platform',
    kind: 'vm',
    ram: [4, 8, 16, 32],
    disk: [64, 128, 256],
    cores: [2, 4, 8],
    price: 0,
    serial: 'uuid',
  },
]

export interface OperatingSystem {
  readonly name: string
  readonly versions: readonly string[]
}

const WINDOWS_CLIENT: readonly OperatingSystem[] = [
  { name: 'Windows 11 Enterprise', versions: ['10.0.22631', '10.0.26100'] },
  { name: 'Windows 10 Pro', versions: ['10.0.19045'] },
]
const MAC: readonly OperatingSystem[] = [{ name: 'macOS Sonoma', versions: ['14.6.1', '14.7'] }]
const SERVER: readonly OperatingSystem[] = [
  { name: 'Windows Server 2022 Datacenter', versions: ['10.0.20348'] },
  { name: 'Red Hat Enterprise Linux', versions: ['9.4', '8.10'] },
  { name: 'Ubuntu', versions: ['22.04', '24.04'] },
]

/** Operating systems that fit a model: Macs run macOS, servers and VMs run server systems. */
export const operatingSystemsFor = (hardware: HardwareModel): readonly OperatingSystem[] => {
  if (hardware.manufacturer === 'Apple Inc.') return MAC
  if (hardware.kind === 'srv' || hardware.kind === 'vm') return SERVER
  return WINDOWS_CLIENT
}
