/**
 * The inventory-service stand-in on AWS, for the integration test: a function behind a function URL serving the
 * demo tables (handler.ts), the token it accepts in a generated secret. The URL has no IAM auth because the
 * service's own check is the point: the stand-in answers 401 to any request without the secret's token.
 */
import { join } from 'node:path'
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib'
import { Architecture, FunctionUrlAuthType, Runtime } from 'aws-cdk-lib/aws-lambda'
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { Secret } from 'aws-cdk-lib/aws-secretsmanager'
import type { Construct } from 'constructs'
import { PROJECT_ROOT } from '../../infra/constructs/exporter.ts'
import { StandInVariable } from './handler.ts'

export interface StandInStackProps extends StackProps {
  /** The day the demo tables show when deployed (the test moves it forward). */
  readonly day: string
  /** Rows of the devices table. */
  readonly deviceRows: number
}

export class StandInStack extends Stack {
  readonly function: NodejsFunction
  /** The service's base URL (ends in "/"). */
  readonly url: string
  /** The one token the stand-in accepts: alphanumeric, so it passes the exporter's token character check. */
  readonly token: Secret

  constructor(scope: Construct, id: string, props: StandInStackProps) {
    super(scope, id, { description: 'Inventory export integration test: the inventory-service stand-in', ...props })
    this.token = new Secret(this, 'Token', {
      description: 'The token the inventory-service stand-in accepts (integration test only)',
      generateSecretString: { excludePunctuation: true, includeSpace: false, passwordLength: 40 },
      removalPolicy: RemovalPolicy.DESTROY,
    })
    this.function = new NodejsFunction(this, 'Function', {
      description: 'Inventory-service stand-in: the demo tables as CSV behind a function URL (integration test)',
      entry: join(PROJECT_ROOT, 'integ/stand-in/handler.ts'),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(30),
      logGroup: new LogGroup(this, 'LogGroup', {
        retention: RetentionDays.ONE_WEEK,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      environment: this.variablesOn(props.day, props.deviceRows),
      // As the exporter is bundled: ES modules, the SDK's ES builds, nothing left to install at run time.
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        banner:
          "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);",
        minify: true,
        externalModules: [],
        forceDockerBundling: false,
      },
    })
    this.token.grantRead(this.function)
    this.url = this.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE }).url
    new CfnOutput(this, 'StandInUrl', { value: this.url })
  }

  /** The function's variables on `day`: the test sets them again to move the tables forward. */
  variablesOn(day: string, deviceRows: number): Record<string, string> {
    return {
      [StandInVariable.TOKEN_SECRET_ARN]: this.token.secretArn,
      [StandInVariable.DEMO_DAY]: day,
      [StandInVariable.DEVICE_ROWS]: String(deviceRows),
    }
  }
}
