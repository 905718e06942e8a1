/**
 * The failures of `npm run verify`: the AWS account cannot be reached or the stack is not there (the command
 * stops with one coded line), or one check of a reachable stack failed (a line of the report).
 */
import { ErrorCode, ExportError, FailureClass } from '../export/index.ts'

/** AWS error names that mean "these credentials cannot act in this account", not "the stack is broken". */
const CREDENTIAL_ERRORS = new Set([
  'CredentialsProviderError',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'InvalidAccessKeyId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'AccessDeniedException',
  'InvalidSignatureException',
])

/** The next steps of AwsUnavailableError: for credentials that cannot act, and for an account not reached. */
export interface AwsHints {
  readonly credentials: string
  readonly network: string
}

const VERIFY_HINTS: AwsHints = {
  credentials:
    'sign in to the account and region the stack is deployed in (AWS_PROFILE, AWS_REGION or --region), with rights to read the stack, invoke the function and query Athena',
  network: 'check the network and the region (AWS_REGION or --region); nothing was changed',
}

/** The account cannot be reached with these credentials: none, expired, another account's, or no network. */
export class AwsUnavailableError extends ExportError {
  constructor(what: string, cause: unknown, hints: AwsHints = VERIFY_HINTS) {
    const name = (cause as Error | undefined)?.name ?? 'Error'
    const credentials = CREDENTIAL_ERRORS.has(name)
    super(
      ErrorCode.AWS_UNAVAILABLE,
      credentials ? FailureClass.AUTH : FailureClass.NETWORK,
      `${what}: ${name}: ${oneLine((cause as Error | undefined)?.message ?? String(cause))}`,
      { cause, hint: credentials ? hints.credentials : hints.network },
    )
  }
}

/** DescribeStacks says the stack does not exist in this account and region. */
export class StackNotFoundError extends ExportError {
  constructor(stackName: string, region: string) {
    super(ErrorCode.STACK_NOT_FOUND, FailureClass.NOT_FOUND, `stack ${stackName} does not exist in ${region}`, {
      hint: 'name the stack as deployment.stackName names it, in the region it was deployed to (--region)',
    })
  }
}

/** The stack lacks an output verify reads: deployed from an older version, or not by this project. */
export class StackOutputMissingError extends ExportError {
  constructor(stackName: string, outputs: readonly string[]) {
    super(
      ErrorCode.STACK_OUTPUT_MISSING,
      FailureClass.CONFIG,
      `stack ${stackName} has no output ${outputs.join(', ')}`,
      { hint: 'deploy this version of the stack (npx cdk deploy), then run verify again' },
    )
  }
}

/** Athena did not answer a query: it failed, was cancelled or did not finish in time. */
export class AthenaQueryError extends ExportError {
  constructor(subject: string, reason: string) {
    super(ErrorCode.ATHENA_QUERY_FAILED, FailureClass.INTERNAL, `${subject}: ${oneLine(reason)}`, {
      hint: 'open the query in the Athena console (workgroup of the stack) for its details; docs/operations.md lists what the views need',
    })
  }
}

/** Athena answered, but not what the export reported. */
export class VerifyMismatchError extends ExportError {
  constructor(subject: string, expected: string, actual: string) {
    super(ErrorCode.VERIFY_MISMATCH, FailureClass.DATA, `${subject}: expected ${expected}, Athena answered ${actual}`, {
      hint: 'another run may have published in between; run verify again, and if it repeats compare the run record with the table',
    })
  }
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ')
