/**
 * Next steps as they apply on this machine. The shared errors carry the Lambda's advice (the token lives in
 * Secrets Manager there); run locally, the token comes from --token-file or INVENTORY_TOKEN, so those codes get
 * advice that names them instead.
 */
import { ErrorCode } from '../export/index.ts'
import { TOKEN_ENVIRONMENT_VARIABLE } from './args.ts'

const LOCAL_HINTS: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.AUTH_REJECTED]: `create a new API token (Settings > API Tokens), save it to a file and pass --token-file FILE (or set ${TOKEN_ENVIRONMENT_VARIABLE}), then run npm run check`,
  [ErrorCode.TOKEN_UNAVAILABLE]: `pass --token-file FILE (a file holding only the token) or set ${TOKEN_ENVIRONMENT_VARIABLE}`,
}

/** The next step for a failure seen by a local command. */
export const localHint = (failure: { readonly code: string; readonly hint?: string | undefined }): string | undefined =>
  LOCAL_HINTS[failure.code as ErrorCode] ?? failure.hint
