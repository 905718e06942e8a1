/** The users of the emulated service and their API tokens. */
import { DemoTableId } from './tables.ts'

export const UserStatus = { ACTIVE: 'active', REVOKED: 'revoked', EXPIRED: 'expired' } as const
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus]

export interface EmulatorUser {
  readonly id: number
  readonly username: string
  readonly displayName: string
  readonly email: string
  /** The API token that acts as this user (the service has one token per user here). */
  readonly token: string
  /** Status of the token: revoked and expired tokens get 401. */
  readonly status: UserStatus
  /** Saved table ids the user may read; 'all' reads every table, including ones added later. */
  readonly tables: 'all' | readonly string[]
  /** Roles reported by `/rest/usermanager/me`. @default ['api'] */
  readonly roles?: readonly string[]
}

/** Opaque token values; obviously fake so nobody mistakes them for real credentials. */
export const DEMO_TOKENS = {
  /** User `api-export`: reads every table. */
  valid: 'emu-token-valid-3f9c2a7e51d84b06',
  /** User `api-limited`: reads 1001-1004 only, so 1005 (and any added table) answers 403. */
  limited: 'emu-token-limited-8b1d6c0f2e9a4735',
  /** User `api-old`: revoked by an administrator. */
  revoked: 'emu-token-revoked-c47e05b9a1f26d38',
  /** User `api-2015`: past its expiry date. */
  expired: 'emu-token-expired-e2a9170d4c5b8f63',
} as const

export const DEMO_TOKEN: string = DEMO_TOKENS.valid

export const DEMO_USERS: EmulatorUser[] = [
  {
    id: 7,
    username: 'api-export',
    displayName: 'API Export (Athena)',
    email: 'api-export@corp.example.com',
    token: DEMO_TOKENS.valid,
    status: 'active',
    tables: 'all',
    roles: ['api', 'export', 'read-all-tables'],
  },
  {
    id: 8,
    username: 'api-limited',
    displayName: 'API Reporting (eingeschränkt)',
    email: 'api-limited@corp.example.com',
    token: DEMO_TOKENS.limited,
    status: 'active',
    tables: [DemoTableId.DEVICES, DemoTableId.SOFTWARE, DemoTableId.USERS, DemoTableId.RETIRED],
    roles: ['api', 'export'],
  },
  {
    id: 3,
    username: 'api-old',
    displayName: 'Old Integration',
    email: 'api-old@corp.example.com',
    token: DEMO_TOKENS.revoked,
    status: 'revoked',
    tables: 'all',
  },
  {
    id: 2,
    username: 'api-2015',
    displayName: 'Legacy Script',
    email: 'api-2015@corp.example.com',
    token: DEMO_TOKENS.expired,
    status: 'expired',
    tables: 'all',
  },
]
