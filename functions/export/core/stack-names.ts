/**
 * Names of the resources one deployment owns, derived from its stack name so several environments can share an
 * account and region without colliding. The default stack keeps the names it has always had.
 */

export const DEFAULT_STACK_NAME = 'InventoryExport'

/** CloudFormation stack names: a letter, then letters, digits and hyphens, 128 at most. */
export const STACK_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9-]{0,127}$/

interface StackResourceNames {
  /** Glue database (letters, digits and underscores, lowercase). */
  readonly glueDatabase: string
  readonly athenaWorkgroup: string
  /** Name of the token secret the stack creates. */
  readonly tokenSecret: string
  /** Name of the pseudonymization key's secret the stack creates (when a table pseudonymizes). */
  readonly pseudonymizationSecret: string
  /** Prefix of the alarm names and the dashboard name. */
  readonly alarmPrefix: string
}

/** `InventoryExport-Prod` -> `inventory_export_prod`: what Glue accepts as a database name. */
export const snakeCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase()

/** The names one stack gives its resources when the configuration names none. */
export const stackResourceNames = (stackName: string): StackResourceNames => {
  const isDefault = stackName === DEFAULT_STACK_NAME
  return {
    glueDatabase: isDefault ? 'inventory' : snakeCase(stackName),
    athenaWorkgroup: isDefault ? 'inventory' : stackName,
    tokenSecret: `${stackName}/inventory-token`,
    pseudonymizationSecret: `${stackName}/inventory-pseudonymization-key`,
    alarmPrefix: stackName,
  }
}
