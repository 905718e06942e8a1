/** Software titles the demo inventory finds installed; vendor names with commas are real-world spellings. */

export interface SoftwareTitle {
  readonly name: string
  readonly vendor: string
  readonly versions: readonly string[]
  /** Typical installed size in MB. */
  readonly sizeMb: number
  /** Windows install folder; backslashes and spaces are what real exports contain. */
  readonly path: string
  readonly licensed: boolean
}

export const SOFTWARE: readonly SoftwareTitle[] = [
  {
    name: 'Microsoft 365 Apps for enterprise - de-de',
    vendor: 'Microsoft Corporation',
    versions: ['16.0.17928.20156', '16.0.18025.20104'],
    sizeMb: 2810,
    path: 'C:\\Program Files\\Microsoft Office',
    licensed: true,
  },
  {
    name: 'Google Chrome',
    vendor: 'Google LLC',
    versions: ['130.0.6723.117', '131.0.6778.70'],
    sizeMb: 612.4,
    path: 'C:\\Program Files\\Google\\Chrome\\Application',
    licensed: false,
  },
  {
    name: 'Mozilla Firefox (x64 de)',
    vendor: 'Mozilla',
    versions: ['132.0.2', '128.4.0esr'],
    sizeMb: 245.7,
    path: 'C:\\Program Files\\Mozilla Firefox',
    licensed: false,
  },
  {
    name: '7-Zip 24.08 (x64)',
    vendor: 'Igor Pavlov',
    versions: ['24.08'],
    sizeMb: 5.6,
    path: 'C:\\Program Files\\7-Zip',
    licensed: false,
  },
  {
    name: 'Adobe Acrobat (64-bit)',
    vendor: 'Adobe Inc.',
    versions: ['24.004.20220', '24.003.20180'],
    sizeMb: 1187.9,
    path: 'C:\\Program Files\\Adobe\\Acrobat DC',
    licensed: true,
  },
  {
    name: 'Zoom Workplace (64-bit)',
    vendor: 'Zoom Video Communications, Inc.',
    versions: ['6.2.7', '6.3.0'],
    sizeMb: 321,
    path: 'C:\\Program Files\\Zoom\\bin',
    licensed: true,
  },
  {
    name: 'Microsoft Visual Studio Code (User)',
    vendor: 'Microsoft Corporation',
    versions: ['1.95.3', '1.94.2'],
    sizeMb: 389.2,
    path: 'C:\\Users\\Public\\AppData\\Local\\Programs\\Microsoft VS Code',
    licensed: false,
  },
  {
    name: 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810',
    vendor: 'Microsoft Corporation',
    versions: ['14.40.33810.0'],
    sizeMb: 20.5,
    path: 'C:\\Windows\\System32',
    licensed: false,
  },
  {
    name: 'Slack',
    vendor: 'Slack Technologies, LLC',
    versions: ['4.41.97'],
    sizeMb: 498.1,
    path: 'C:\\Program Files\\Slack',
    licensed: true,
  },
  {
    name: 'CrowdStrike Windows Sensor',
    vendor: 'CrowdStrike, Inc.',
    versions: ['7.18.18710.0', '7.19.18913.0'],
    sizeMb: 142.8,
    path: 'C:\\Program Files\\CrowdStrike',
    licensed: true,
  },
  {
    name: 'Python 3.12.7 (64-bit)',
    vendor: 'Python Software Foundation',
    versions: ['3.12.7150.0'],
    sizeMb: 101.3,
    path: 'C:\\Program Files\\Python312',
    licensed: false,
  },
  {
    name: 'Notepad++ (64-bit x64)',
    vendor: 'Notepad++ Team',
    versions: ['8.7.1'],
    sizeMb: 14.9,
    path: 'C:\\Program Files\\Notepad++',
    licensed: false,
  },
  {
    name: 'SAP GUI for Windows 8.00 "Compilation 2"',
    vendor: 'SAP SE',
    versions: ['8.00.12'],
    sizeMb: 1450,
    path: 'C:\\Program Files (x86)\\SAP\\FrontEnd\\SAPgui',
    licensed: true,
  },
]

/** UTC offsets (minutes) of the agents that report installs; the service keeps the agent's offset. */
export const AGENT_OFFSETS = [60, 120, 0, -300, 540, 330, -180] as const
