/**
 * The CDK integration test, run by integ-runner in a sandbox account (docs: deployment, "Proving a deployment"):
 * `npx integ-runner --update-on-failed` deploys the stand-in and the exporter, runs the assertions of
 * integ-app.ts, and destroys both stacks. Synthesizing it needs no account: `npm test` compares it with the
 * snapshot in integ.export.ts.snapshot/.
 */
import { App } from 'aws-cdk-lib'
import { addIntegTest, integContext } from './integ-app.ts'

// Without stack traces in the construct metadata: they hold this checkout's absolute paths, and the snapshot,
// metadata included, is committed.
const app = new App({
  context: {
    ...integContext(),
    'aws:cdk:disable-stack-trace': true,
    'aws:cdk:disable-creation-stack-traces': true,
  },
})
addIntegTest(app)
app.synth()
