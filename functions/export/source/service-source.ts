/** The service as a table source: the token check and one download per attempt, over the inventory client. */
import type { ExportTuning, SourceConfig } from '../core/config.ts'
import { RunMode } from '../core/constants.ts'
import { InventoryClient } from './client.ts'
import type { RetryClock } from './retry.ts'
import type { TableSource } from './table-source.ts'

interface ServiceSourceOptions {
  /** The `source` section: base URL, plain-http permission. */
  readonly source: Pick<SourceConfig, 'baseUrl' | 'allowInsecureHttp'>
  readonly token: string
  readonly tuning: Pick<ExportTuning, 'retry' | 'timeouts'>
  /** PEM text of extra CA certificates, already read from `source.caCertificatesFile` (see ca-certificates.ts). */
  readonly extraCaCertificates?: string | undefined
  /** The token check's retries wait on it. @default systemClock */
  readonly clock?: RetryClock | undefined
}

/** The one wording of the plain-http warning, logged once per run by whoever runs the source. */
const insecureHttpWarning = (source: ServiceSourceOptions['source']): string | undefined => {
  const url = new URL(source.baseUrl)
  return source.allowInsecureHttp && url.protocol === 'http:'
    ? `plain http to ${url.host} (source.allowInsecureHttp): the token crosses the network unencrypted`
    : undefined
}

export const serviceSource = (options: ServiceSourceOptions): TableSource => {
  const client = new InventoryClient({
    baseUrl: options.source.baseUrl,
    token: options.token,
    tuning: options.tuning,
    extraCaCertificates: options.extraCaCertificates,
    ...(options.clock ? { clock: options.clock } : {}),
  })
  const warning = insecureHttpWarning(options.source)
  return {
    mode: RunMode.EXPORT,
    warnings: warning === undefined ? [] : [warning],
    check: async ({ signal, onRetry }) => {
      const user = await client.getCurrentUser(signal, onRetry)
      return { tokenOwner: typeof user.username === 'string' ? user.username : undefined, user }
    },
    open: async (table, { signal, attempt }) => {
      const download = await client.requestTable(table.id, table.format, { signal, attempt })
      return {
        httpStatus: download.status,
        body: download.body,
        charset: download.charset,
        received: () => download.progress.bytes,
        cancel: download.cancel,
        archive: table.archiveRaw,
      }
    },
  }
}
