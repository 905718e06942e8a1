/**
 * History operations on AWS (an erasure request, a rewrite after a column setting changed): a Step Functions state
 * machine that invokes the history function with the history event it is started with (the *plan*: the table's
 * export dates in batches, under the table's lease), then, in a Map bounded by `maxConcurrency` (inline, or a
 * Distributed Map of child executions from `distributedFromDates` dates on), once per batch with the same request,
 * the batch's dates and the plan's lease, then once more with the request and `"finish": true` (a rewrite moves the
 * registry there, once, after every date is in line; the lease is given up). The value of a condition is never in the input (the CLI prints digests,
 * docs/personal-data.md), and the state machine logs errors only, without execution data.
 */
import { ArnFormat, Aws, Duration, Stack } from 'aws-cdk-lib'
import type { IFunction } from 'aws-cdk-lib/aws-lambda'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import {
  Choice,
  Condition,
  DefinitionBody,
  DistributedMap,
  Fail,
  JitterType,
  JsonPath,
  LogLevel,
  Map as MapState,
  StateMachine,
  StateMachineType,
  TaskInput,
  type TaskStateBase,
} from 'aws-cdk-lib/aws-stepfunctions'
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks'
import { Construct } from 'constructs'
import { acknowledgeFinding, acknowledgeWildcardResource } from '../nag.ts'

/** The error names the function throws when a batch stopped at its time limit with dates left (core/errors). */
export const BATCH_INCOMPLETE_ERROR = 'HistoryBatchIncompleteError'

/** Lambda's own transient failures, retried with backoff by the state machine. */
const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
]
const LAMBDA_SERVICE_RETRY = {
  errors: LAMBDA_SERVICE_ERRORS,
  interval: Duration.seconds(2),
  maxAttempts: 6,
  backoffRate: 2,
}
/**
 * Throttling: a batch beyond the function's reserved concurrency (shared with the schedules' runs) waits for a
 * slot, for up to about an hour, since a batch may hold a slot for the function's whole timeout.
 */
const THROTTLED_RETRY = {
  errors: ['Lambda.TooManyRequestsException'],
  interval: Duration.seconds(10),
  maxAttempts: 30,
  backoffRate: 1.5,
  maxDelay: Duration.minutes(2),
  jitterStrategy: JitterType.FULL,
}

export interface HistoryOperationsProps {
  /** The function the plan, every batch and the finish invoke (the exporter's history function). */
  readonly function: IFunction
  /** Batches run at once; each is one invocation of the function. @default 4 */
  readonly maxConcurrency?: number
  /**
   * Requests of at least this many dates run their batches in a Distributed Map (each batch a child execution with a
   * history of its own), where an inline Map would keep every batch's events in the one execution's history (at most
   * 25,000 events). @default DEFAULT_DISTRIBUTED_FROM_DATES
   */
  readonly distributedFromDates?: number
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays
}

/** `deployment.historyOperations.distributedFromDates`' default: a year and a bit of daily dates stays inline. */
export const DEFAULT_DISTRIBUTED_FROM_DATES = 400

/** The state machine of history operations, and the log group it writes its errors to. */
export class HistoryOperations extends Construct {
  readonly stateMachine: StateMachine
  readonly logGroup: LogGroup
  readonly maxConcurrency: number

  constructor(scope: Construct, id: string, props: HistoryOperationsProps) {
    super(scope, id)
    this.maxConcurrency = props.maxConcurrency ?? 4
    const fn = props.function
    const plan = new LambdaInvoke(this, 'Plan', {
      comment: 'The table export dates in batches: {"history": {...}}, the execution input',
      lambdaFunction: fn,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      resultPath: '$.plan',
    })
      .addRetry(LAMBDA_SERVICE_RETRY)
      .addRetry(THROTTLED_RETRY)

    // The request as the execution was started, whatever its operation's fields, the batch's dates and the plan's
    // lease; chosen in the parent execution, so a Distributed Map's child gets them as its input.
    const itemSelector = {
      'history.$': '$$.Execution.Input.history',
      'dates.$': '$$.Map.Item.Value',
      'lease.$': '$.plan.lease',
    }
    const inline = new MapState(this, 'Batches', {
      comment: 'One invocation per batch of dates, at most maxConcurrency at once',
      itemsPath: '$.plan.batches',
      maxConcurrency: this.maxConcurrency,
      itemSelector,
      resultPath: '$.batches',
    }).itemProcessor(this.batch('Batch', fn))
    const distributed = new DistributedMap(this, 'ManyBatches', {
      comment: 'The same batches as child executions, for a request of many dates',
      itemsPath: '$.plan.batches',
      maxConcurrency: this.maxConcurrency,
      itemSelector,
      mapExecutionType: StateMachineType.STANDARD,
      label: 'HistoryBatches',
      resultPath: '$.batches',
    }).itemProcessor(this.batch('DistributedBatch', fn))
    const threshold = props.distributedFromDates ?? DEFAULT_DISTRIBUTED_FROM_DATES
    const fanOut = new Choice(this, 'HowMany', { comment: `A Distributed Map from ${threshold} dates on` })
      .when(Condition.numberGreaterThanEquals('$.plan.dates', threshold), distributed)
      .otherwise(inline)

    const finish = new LambdaInvoke(this, 'Finish', {
      comment: 'Once every batch is done: {"history": the same request, "finish": true}; a rewrite moves the registry',
      lambdaFunction: fn,
      payload: TaskInput.fromObject({
        history: JsonPath.objectAt('$$.Execution.Input.history'),
        finish: true,
        lease: JsonPath.stringAt('$.plan.lease'),
      }),
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      resultPath: '$.finish',
    })
      .addRetry(LAMBDA_SERVICE_RETRY)
      .addRetry(THROTTLED_RETRY)
      .addCatch(
        new Fail(this, 'FinishFailed', {
          comment: 'What the function said: a date not in line (start the same input again) or another failure',
          errorPath: '$.failure.Error',
          causePath: '$.failure.Cause',
        }),
        { resultPath: '$.failure' },
      )

    this.logGroup = new LogGroup(this, 'LogGroup', { retention: props.logRetention ?? RetentionDays.THREE_MONTHS })
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      comment:
        'Inventory export history operations (erasure requests, rewrites): plan, one invocation per batch of dates, finish',
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(plan.next(fanOut.afterwards().next(finish))),
      // Errors only and no execution data: the inputs hold digests, and nothing of them belongs in the logs.
      logs: { destination: this.logGroup, level: LogLevel.ERROR, includeExecutionData: false },
    })
    acknowledgeFinding(
      this.stateMachine,
      'AwsSolutions-SF1',
      'The state machine logs errors only, without execution data: its inputs are digests of personal data and stay out of the logs; the run records say what each date did.',
    )
    acknowledgeFinding(
      this.stateMachine,
      'AwsSolutions-SF2',
      'X-Ray tracing would add a trace per invocation to a rare, operator-started job; the function logs and run records cover it.',
    )
    acknowledgeWildcardResource(
      this.stateMachine,
      `${fn.functionArn}:*`,
      'The state machine may invoke only the history function; the ":*" suffix matches its versions and aliases, nothing else.',
    )
    // A Distributed Map starts child executions of this state machine, and describes and stops them (CDK's policy).
    const name = Stack.of(this).splitArn(this.stateMachine.stateMachineArn, ArnFormat.COLON_RESOURCE_NAME).resourceName
    const executions = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${name}`
    for (const resource of [`${executions}:*`, `${executions}/HistoryBatches:*`]) {
      acknowledgeWildcardResource(
        this.stateMachine,
        resource,
        "The Distributed Map describes and stops only this state machine's own executions and their child executions.",
      )
    }
    acknowledgeFinding(
      this.stateMachine,
      'AwsSolutions-IAM5[Resource::*]',
      'CloudWatch Logs log delivery (logs:CreateLogDelivery, logs:DescribeLogGroups, ...) supports no resource-level permissions; Step Functions needs it to log to its log group.',
    )
  }

  /** One batch's task, with its retries and the failure that names the batch (one per Map: state names are unique). */
  private batch(id: string, fn: IFunction): TaskStateBase {
    return (
      new LambdaInvoke(this, id, {
        comment: 'One batch: {"history": the same request, "dates": the batch dates, "lease": the plan\'s lease}',
        lambdaFunction: fn,
        payloadResponseOnly: true,
        retryOnServiceExceptions: false,
        // Counts only, so that the Map's output stays small for thousands of dates.
        resultSelector: { 'rows.$': '$.rows', 'dates.$': 'States.ArrayLength($.dates)' },
      })
        .addRetry(LAMBDA_SERVICE_RETRY)
        .addRetry(THROTTLED_RETRY)
        // A batch that ran out of time goes on with the dates it left: each rerun skips the dates already done.
        .addRetry({ errors: [BATCH_INCOMPLETE_ERROR], interval: Duration.seconds(1), maxAttempts: 20, backoffRate: 1 })
        .addCatch(
          new Fail(this, `${id}Failed`, {
            comment: 'Names the batch and what the function said; the dates before it are done',
            errorPath: '$.failure.Error',
            causePath: "States.Format('batch {}: {}', States.JsonToString($.dates), $.failure.Cause)",
          }),
          { resultPath: '$.failure' },
        )
    )
  }
}
