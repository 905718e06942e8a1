/**
 * The CLI's pseudonymization key (`tables[].columns.pseudonymize`): --pseudonymization-key-file, else the
 * INVENTORY_PSEUDONYMIZATION_KEY variable, else none (a table that pseudonymizes then fails as a configuration
 * error before anything is downloaded). The key's text is never printed.
 */
import { readFile } from 'node:fs/promises'
import {
  ConfigError,
  type Environment,
  PSEUDONYMIZATION_KEY_VARIABLE,
  PseudonymizationKey,
  processEnvironment,
} from '../export/index.ts'

export const readPseudonymizationKey = async (
  keyFile: string | undefined,
  environment: Environment = processEnvironment(),
): Promise<PseudonymizationKey | undefined> => {
  if (keyFile !== undefined) {
    const source = `--pseudonymization-key-file ${keyFile}`
    let text: string
    try {
      text = await readFile(keyFile, 'utf8')
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable'
      throw new ConfigError('pseudonymization key', [{ field: source, message: `cannot be read (${reason})` }])
    }
    return PseudonymizationKey.fromText(text, source)
  }
  const fromEnvironment = environment[PSEUDONYMIZATION_KEY_VARIABLE]
  return fromEnvironment === undefined || fromEnvironment.trim() === ''
    ? undefined
    : PseudonymizationKey.fromText(fromEnvironment, PSEUDONYMIZATION_KEY_VARIABLE)
}
