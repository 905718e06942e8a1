/**
 * The CDK app: `npx cdk synth -c config=config/sample.json` (the file is required: there is no default). Reads the configuration file named by context,
 * validates it with the shared schema (a bad file fails synth naming each field), builds the stack and
 * runs the cdk-nag AwsSolutions checks on it.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { App, Validations } from 'aws-cdk-lib'
import { AwsSolutionsChecks } from 'cdk-nag'
import { ConfigError, loadConfigFile, oneLineMessage } from '../functions/export/index.ts'
import { type DeployConfig, parseDeployConfig } from './deployment-config.ts'
import { ExportStack } from './export-stack.ts'
import { SynthStep, synthFailure } from './synth-errors.ts'

/** Context keys read by the app (`-c key=value`). */
export const ContextKey = { CONFIG: 'config', SERVICE_NAME: 'serviceName' } as const
/** Read only to say where the stack name moved; a name outside the file would not rename what derives from it. */
const RETIRED_STACK_NAME_KEY = 'stackName'

/** Reads and validates a configuration file; errors name the file and every offending field. */
export const loadExportConfig = (file: string): DeployConfig => loadConfigFile(file, { validate: parseDeployConfig })

export interface ExportAppResult {
  readonly stack: ExportStack
  readonly config: DeployConfig
  readonly configFile: string
}

/** Adds the export stack, as the context of `app` describes it, and the cdk-nag checks. */
export const addExportStack = (app: App): ExportAppResult => {
  const context = (key: string): string | undefined => {
    const value = app.node.tryGetContext(key)
    return typeof value === 'string' && value.length > 0 ? value : undefined
  }
  const configFile = context(ContextKey.CONFIG)
  // No default file: deploying config/sample.json (inventory.example.com) by accident helps nobody.
  if (configFile === undefined) {
    throw new ConfigError('CDK context', [
      {
        field: ContextKey.CONFIG,
        message: 'is not set; name the configuration file: npx cdk deploy -c config=config/prod.json',
      },
    ])
  }
  if (context(RETIRED_STACK_NAME_KEY) !== undefined) {
    throw new ConfigError('CDK context', [
      {
        field: RETIRED_STACK_NAME_KEY,
        message: `is not read; set deployment.stackName in ${configFile}, so the Glue database, workgroup and secret names follow it`,
      },
    ])
  }
  const config = loadExportConfig(configFile)
  const serviceName = context(ContextKey.SERVICE_NAME)
  const stack = new ExportStack(app, config.deployment.stackName, {
    config,
    ...(serviceName === undefined ? {} : { serviceName }),
  })
  // cdk-nag 3 reads the construct tree from the validation context, which aws-cdk-lib 2.257 (pinned for the
  // integration test's cloud assembly schema) does not provide: the plugin is handed the app itself instead.
  const checks = new AwsSolutionsChecks(app)
  Validations.of(app).addPlugins({ name: checks.name, validate: () => checks.validateScope(app) })
  return { stack, config, configFile }
}

const main = (): void => {
  let configFile: string | undefined
  let step: SynthStep = SynthStep.BUILD
  try {
    // Inside: the App creates the cloud assembly's folder (cdk.out), a step of the build that can fail too.
    const app = new App()
    const named: unknown = app.node.tryGetContext(ContextKey.CONFIG)
    configFile = typeof named === 'string' && named.length > 0 ? named : undefined
    addExportStack(app)
    step = SynthStep.ASSEMBLE
    app.synth()
  } catch (thrown) {
    // One coded line and a next step for the build; exit 2 for configuration, 1 for anything else.
    const { error, nextStep, exitCode } = synthFailure(thrown, step, configFile)
    process.stderr.write(`${oneLineMessage(error)}\n${nextStep ? `next step: ${nextStep}\n` : ''}`)
    process.exit(exitCode)
  }
}

/** True when run as `node infra/app.ts` (import.meta.main needs Node 24.2; older Nodes compare the path). */
const isEntryPoint = (): boolean =>
  import.meta.main ?? (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))

if (isEntryPoint()) main()
