/** Reads `source.caCertificatesFile` for the service source, the same way for the Lambda and the CLI. */
import { readFile } from 'node:fs/promises'
import { ConfigError } from '../core/errors.ts'

/** The PEM text of `file`, or a ConfigError naming the field, the reason and the file (`origin`: whose config). */
export const readCaCertificates = (file: string, origin: string): Promise<string> =>
  readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(origin, [
      { field: 'source.caCertificatesFile', message: `cannot be read (${error.code ?? error.message}: ${file})` },
    ])
  })
