/**
 * Checks the deployment's inputs up front and reports every problem at once, naming the configuration field (or
 * the exporter's prop).
 */
import { statSync } from 'node:fs'
import type { Duration } from 'aws-cdk-lib'
import { ConfigError, type ConfigProblem } from '../../functions/export/index.ts'
import type { DeployConfig } from '../deployment-config.ts'
import { resourceLimitProblems } from './resource-limits.ts'
import { tablePlanProblems } from './table-plan.ts'

/** The exporter's own settings, beside what the configuration decides. */
export interface ExporterValidationInput {
  readonly scheduleMaxEventAge: Duration
  readonly scheduleRetryAttempts: number
}

/** Whether the runtime knows this IANA time zone (EventBridge Scheduler uses the same database). */
export const isKnownTimeZone = (timeZone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone })
    return true
  } catch {
    return false
  }
}

const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * The problems of a configuration that only deploying shows: the tables' schedules and memory, the schedule's
 * time zone, the names and texts of resources over CloudFormation's limits, and the CA file to bundle (`caPath`,
 * resolved against the project root).
 */
export const deploymentProblems = (config: DeployConfig, caPath: string | undefined): ConfigProblem[] => {
  const problems: ConfigProblem[] = [...tablePlanProblems(config), ...resourceLimitProblems(config)]
  const problem = (field: string, message: string) => problems.push({ field, message })
  const { schedule } = config.deployment
  if (!isKnownTimeZone(schedule.timeZone)) {
    problem(
      'deployment.schedule.timeZone',
      `"${schedule.timeZone}" is not an IANA time zone such as "Europe/Berlin" or "UTC"`,
    )
  }
  if (caPath !== undefined && !isFile(caPath)) {
    problem('source.caCertificatesFile', `no file at ${caPath} (relative paths start at the project root)`)
  }
  return problems
}

/** The problems with the exporter's own settings, each naming its prop; empty when there are none. */
export const exporterProblems = (input: ExporterValidationInput): ConfigProblem[] => {
  const problems: ConfigProblem[] = []
  const problem = (field: string, message: string) => problems.push({ field, message })
  const maxAge = input.scheduleMaxEventAge.toSeconds()
  if (maxAge < 60 || maxAge > 86_400)
    problem('scheduleMaxEventAge', `must be between 60 seconds and 24 hours, got ${maxAge} s`)
  if (
    !Number.isInteger(input.scheduleRetryAttempts) ||
    input.scheduleRetryAttempts < 0 ||
    input.scheduleRetryAttempts > 185
  ) {
    problem('scheduleRetryAttempts', `must be a whole number from 0 to 185, got ${input.scheduleRetryAttempts}`)
  }
  return problems
}

/** Throws one ConfigError listing every problem of the configuration, so `cdk synth` names each field. */
export const validateDeployment = (config: DeployConfig, caPath: string | undefined): void => {
  const problems = deploymentProblems(config, caPath)
  if (problems.length > 0) throw new ConfigError('stack settings', problems)
}

/** Throws one ConfigError listing every problem, so `cdk synth` reports it like any bad configuration. */
export const validateExporterProps = (input: ExporterValidationInput): void => {
  const problems = exporterProblems(input)
  if (problems.length > 0) throw new ConfigError('stack settings', problems)
}
