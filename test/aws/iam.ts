/**
 * Decides a request as IAM does, with a maintained evaluator (@cloud-copilot/iam-simulate) over the role's
 * identity policies, and records every request decided so a test can compare what was sent with what is granted.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate'
import { EXPORTER_ROLE_ARN, type IdentityPolicy, LOCAL_ACCOUNT } from './role-policy.ts'

export interface AuthorizationRequest {
  /** e.g. s3:GetObject */
  readonly action: string
  /** The resource ARN the action is authorized on. */
  readonly resource: string
  /** Request context keys, e.g. { 's3:prefix': 'inventory/' }; an absent key is absent from the request. */
  readonly context?: Readonly<Record<string, string | string[]>>
}

export interface Decision extends AuthorizationRequest {
  readonly allowed: boolean
  /** Allowed, ImplicitlyDenied or ExplicitlyDenied. */
  readonly result: string
}

export class Authorizer {
  /** Every decision made, in order: what the function sent, and what IAM said. */
  readonly decisions: Decision[] = []
  readonly #policies: readonly IdentityPolicy[]
  /** When false, decisions are made and recorded but not enforced (a test of the stand-in without IAM). */
  readonly #enforce: boolean

  constructor(policies: readonly IdentityPolicy[], { enforce = true }: { enforce?: boolean } = {}) {
    this.#policies = policies
    this.#enforce = enforce
  }

  /** IAM's decision for one request as the exporter role, recorded. */
  async decide(request: AuthorizationRequest, { record = true } = {}): Promise<Decision> {
    const response = await runSimulation(
      {
        request: {
          principal: EXPORTER_ROLE_ARN,
          action: request.action,
          resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
          contextVariables: { ...request.context },
        },
        identityPolicies: this.#policies.map((p) => ({ name: p.name, policy: p.policy })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
      },
      {},
    )
    if (response.resultType === 'error') {
      throw new Error(
        `the IAM evaluator refused ${request.action} on ${request.resource}: ${JSON.stringify(response.errors)}`,
      )
    }
    const result = response.overallResult
    const decision = { ...request, allowed: result === 'Allowed' || !this.#enforce, result }
    if (record) this.decisions.push(decision)
    return decision
  }

  /** Every action sent, sorted and unique. */
  actionsSent(): string[] {
    return [...new Set(this.decisions.map((d) => d.action))].sort()
  }

  /** Requests the service refused for a reason beyond the request's own decision (S3's 403 for a missing key). */
  readonly refusals: Decision[] = []

  /** Records a refusal made on a further, implicit check (see s3-front.ts). */
  refuse(request: AuthorizationRequest, why: string): void {
    this.refusals.push({ ...request, allowed: false, result: why })
  }

  /** The requests answered AccessDenied: denied by IAM, or refused on an implicit check. */
  denied(): Decision[] {
    return [...this.decisions.filter((d) => d.result !== 'Allowed'), ...this.refusals]
  }
}
