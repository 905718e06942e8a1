/**
 * How `cdk synth` reports a failure: what failed in the build and the next step for the build. Nothing has run or
 * been deployed at synth time, so the runtime's hints (the previous data is kept, the run record) do not apply.
 */
import { ConfigError, ErrorCode, ExportError, FailureClass } from '../functions/export/index.ts'

/** The steps of `cdk synth`, as a failure names them. */
export const SynthStep = {
  /** Reading the configuration file and building the stacks from it, the function's bundle included. */
  BUILD: 'building the stacks',
  /** Writing the templates and assets into the cloud assembly (cdk.out), after the stacks' checks. */
  ASSEMBLE: 'writing the cloud assembly',
} as const
export type SynthStep = (typeof SynthStep)[keyof typeof SynthStep]

/** The synth command a next step names: the same file again, or the way to name one. */
const synthCommand = (configFile: string | undefined): string =>
  `npx cdk synth -c config=${configFile ?? 'config/<your file>.json'}`

/** A step of `cdk synth` failed for a reason other than the configuration: a bundling, disk or CDK failure. */
export class SynthError extends ExportError {
  readonly step: SynthStep
  constructor(details: { step: SynthStep; configFile: string | undefined; reason: string; cause?: unknown }) {
    const from = details.configFile === undefined ? '' : ` from ${details.configFile}`
    super(ErrorCode.SYNTH_FAILED, FailureClass.INTERNAL, `cdk synth failed ${details.step}${from}: ${details.reason}`, {
      cause: details.cause,
      hint: `nothing was deployed; fix what the message names (a full disk, or esbuild missing from node_modules: npm ci), then run ${synthCommand(details.configFile)} again; if it fails the same way with this configuration, report it with this message`,
    })
    this.step = details.step
  }
}

/** What `cdk synth` prints for anything thrown in `step`: one coded line and a next step for the build. */
export const synthFailure = (
  thrown: unknown,
  step: SynthStep,
  configFile: string | undefined,
): { error: ExportError; nextStep: string; exitCode: 1 | 2 } => {
  if (thrown instanceof ConfigError) {
    const nextStep =
      thrown.origin === 'CDK context'
        ? `name the configuration file in the context, then synthesize: ${synthCommand(configFile)}`
        : `fix the fields named above in ${configFile ?? 'the configuration file'}, then run ${synthCommand(configFile)} again`
    return { error: thrown, nextStep, exitCode: 2 }
  }
  if (thrown instanceof ExportError && thrown.failureClass === FailureClass.CONFIG) {
    return { error: thrown, nextStep: thrown.hint ?? '', exitCode: 2 }
  }
  // Anything else is the build's failure, not a run's: name the step and keep the thrower's words as the reason.
  const reason = thrown instanceof Error ? thrown.message : String(thrown)
  const error = new SynthError({ step, configFile, reason, cause: thrown })
  return { error, nextStep: error.hint ?? '', exitCode: 1 }
}
