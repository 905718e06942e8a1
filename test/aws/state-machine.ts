/**
 * A synthesized state machine driven the way Step Functions runs it, for the subset the stack's definitions use
 * (history-operations.ts): Task states whose Resource is a Lambda function's ARN (payloadResponseOnly; the payload
 * is the state's input, or its Parameters with `key.$` paths), a Choice on a number (NumericGreaterThanEquals, with
 * a Default), a Map (ItemsPath, ItemSelector, MaxConcurrency, ItemProcessor) inline or distributed (ProcessorConfig
 * Mode DISTRIBUTED: each item a child execution whose context is its own, `$$.Execution.Input` being the item),
 * Retry by error name, Catch with ResultPath, Fail with ErrorPath and CausePath, ResultPath and ResultSelector. Each
 * invocation, and each child execution's start, is first decided by IAM for the state machine's role, as Step
 * Functions' call to Lambda (or to itself) would be.
 */
import type { Authorizer } from './iam.ts'

type Json = Record<string, unknown>

interface State {
  readonly Type: 'Task' | 'Map' | 'Fail' | 'Choice'
  readonly Choices?: readonly { Variable: string; NumericGreaterThanEquals?: number; Next: string }[]
  readonly Default?: string
  readonly Resource?: string
  readonly Next?: string
  readonly End?: boolean
  readonly ResultPath?: string | null
  readonly ResultSelector?: Json
  readonly Parameters?: Json
  readonly Retry?: readonly { ErrorEquals: string[]; MaxAttempts?: number }[]
  readonly Catch?: readonly { ErrorEquals: string[]; ResultPath?: string; Next: string }[]
  readonly ItemsPath?: string
  readonly ItemSelector?: Json
  readonly MaxConcurrency?: number
  readonly ItemProcessor?: Definition & { readonly ProcessorConfig?: { Mode?: string; ExecutionType?: string } }
  readonly ErrorPath?: string
  readonly CausePath?: string
}

export interface Definition {
  readonly StartAt: string
  readonly States: Record<string, State>
}

/** A function invocation: its answer, or the error Lambda reports (errorType is the error's name). */
export type Invoke = (functionArn: string, payload: unknown) => Promise<unknown>

/** How an execution failed, as DescribeExecution reports it. */
export class ExecutionFailed extends Error {
  readonly error: string
  readonly failureCause: string
  constructor(error: string, cause: string) {
    super(`${error}: ${cause}`)
    this.error = error
    this.failureCause = cause
  }
}

export interface Execution {
  /** Every invocation, in order of start: the state's name and the payload sent. */
  readonly invocations: { readonly state: string; readonly payload: unknown }[]
  /** The most invocations in flight at once. */
  peakConcurrency: number
  /** Child executions a Distributed Map started. */
  childExecutions: number
}

const get = (path: string, input: unknown, context: Json): unknown => {
  const [root, ...keys] = path.split('.')
  let value: unknown = root === '$$' ? context : input
  for (const key of keys) value = (value as Json | undefined)?.[key]
  return value
}

/** Payload templates: `key.$` fields are paths into the input (`$`) or the context object (`$$`). */
const select = (template: Json, input: unknown, context: Json): Json =>
  Object.fromEntries(
    Object.entries(template).map(([key, value]) => {
      if (!key.endsWith('.$')) {
        return [key, typeof value === 'object' && value !== null ? select(value as Json, input, context) : value]
      }
      const path = String(value)
      const length = /^States\.ArrayLength\((.+)\)$/.exec(path)
      return [
        key.slice(0, -2),
        length ? (get(length[1]!, input, context) as unknown[]).length : get(path, input, context),
      ]
    }),
  )

const withResult = (input: unknown, path: string | null | undefined, result: unknown): unknown => {
  if (path === null) return input
  if (path === undefined || path === '$') return result
  const keys = path.split('.').slice(1)
  const copy = structuredClone(input) as Json
  let at = copy
  for (const key of keys.slice(0, -1)) {
    at[key] ??= {}
    at = at[key] as Json
  }
  at[keys.at(-1)!] = result
  return copy
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : 'Error')

/** Runs `definition` on `input`; resolves to the output, or rejects with ExecutionFailed. */
export const runStateMachine = async (
  definition: Definition,
  input: unknown,
  options: {
    invoke: Invoke
    authorizer: Authorizer
    /** The state machine's own ARN, which a Distributed Map starts its child executions of. */
    stateMachineArn?: string
  },
): Promise<{ output: unknown; execution: Execution }> => {
  const execution: Execution = { invocations: [], peakConcurrency: 0, childExecutions: 0 }
  let inFlight = 0
  const invokeTask = async (name: string, state: State, stateInput: unknown, context: Json): Promise<unknown> => {
    const resource = state.Resource!
    const decision = await options.authorizer.decide({ action: 'lambda:InvokeFunction', resource })
    if (!decision.allowed)
      throw Object.assign(new Error(`not authorized to invoke ${resource}`), { name: 'Lambda.AWSLambdaException' })
    const payload = state.Parameters ? select(state.Parameters, stateInput, context) : stateInput
    execution.invocations.push({ state: name, payload })
    inFlight++
    execution.peakConcurrency = Math.max(execution.peakConcurrency, inFlight)
    try {
      const answer = await options.invoke(resource, payload)
      return state.ResultSelector ? select(state.ResultSelector, answer, context) : answer
    } finally {
      inFlight--
    }
  }

  const run = async (machine: Definition, machineInput: unknown, context: Json): Promise<unknown> => {
    let name = machine.StartAt
    let current = machineInput
    for (;;) {
      const state = machine.States[name]!
      if (state.Type === 'Fail') {
        throw new ExecutionFailed(String(get(state.ErrorPath!, current, context)), causeOf(state.CausePath!, current))
      }
      if (state.Type === 'Choice') {
        const chosen = state.Choices!.find(
          (c) =>
            c.NumericGreaterThanEquals !== undefined &&
            Number(get(c.Variable, current, context)) >= c.NumericGreaterThanEquals,
        )
        name = chosen?.Next ?? state.Default!
        continue
      }
      let result: unknown
      try {
        result =
          state.Type === 'Task'
            ? await withRetries(name, state, current, context)
            : await runMap(state, current, context)
      } catch (error) {
        if (error instanceof ExecutionFailed) throw error
        const handler = state.Catch?.find((c) =>
          c.ErrorEquals.some((e) => e === 'States.ALL' || e === errorName(error)),
        )
        if (handler === undefined) throw new ExecutionFailed(errorName(error), (error as Error).message)
        current = withResult(current, handler.ResultPath, { Error: errorName(error), Cause: (error as Error).message })
        name = handler.Next
        continue
      }
      current = withResult(current, state.ResultPath, result)
      if (state.End === true || state.Next === undefined) return current
      name = state.Next
    }
  }

  const withRetries = async (name: string, state: State, stateInput: unknown, context: Json): Promise<unknown> => {
    const attempts = new Map<object, number>()
    for (;;) {
      try {
        return await invokeTask(name, state, stateInput, context)
      } catch (error) {
        const retrier = state.Retry?.find((r) => r.ErrorEquals.includes(errorName(error)))
        const used = (retrier && attempts.get(retrier)) ?? 0
        if (retrier === undefined || used >= (retrier.MaxAttempts ?? 3)) throw error
        attempts.set(retrier, used + 1)
      }
    }
  }

  const runMap = async (state: State, stateInput: unknown, context: Json): Promise<unknown[]> => {
    const items = get(state.ItemsPath ?? '$', stateInput, context) as unknown[]
    const results: unknown[] = new Array(items.length)
    let next = 0
    const worker = async () => {
      while (next < items.length) {
        const index = next++
        const itemContext = { ...context, Map: { Item: { Index: index, Value: items[index] } } }
        const item = state.ItemSelector ? select(state.ItemSelector, stateInput, itemContext) : items[index]
        if (state.ItemProcessor!.ProcessorConfig?.Mode !== 'DISTRIBUTED') {
          results[index] = await run(state.ItemProcessor!, item, itemContext)
          continue
        }
        // A child execution of this state machine: started as the role may, with a context of its own.
        const resource = options.stateMachineArn ?? 'arn:aws:states:::stateMachine:unknown'
        const decision = await options.authorizer.decide({ action: 'states:StartExecution', resource })
        if (!decision.allowed) throw new ExecutionFailed('States.Runtime', `not authorized to start ${resource}`)
        execution.childExecutions++
        // A failed child fails the Map run, with no failure tolerated: the parent sees the threshold's error.
        results[index] = await run(state.ItemProcessor!, item, { Execution: { Input: item } }).catch(
          (error: unknown) => {
            const failed =
              error instanceof ExecutionFailed ? error : new ExecutionFailed(errorName(error), String(error))
            throw new ExecutionFailed(
              'States.ExceedToleratedFailureThreshold',
              `a child execution failed: ${failed.error}: ${failed.failureCause}`,
            )
          },
        )
      }
    }
    const width = Math.min(state.MaxConcurrency || items.length, items.length)
    await Promise.all(Array.from({ length: width }, worker))
    return results
  }

  const causeOf = (path: string, at: unknown): string => {
    const format = /^States\.Format\('(.*)', States\.JsonToString\((.+)\), (.+)\)$/.exec(path)
    if (format === null) return String(get(path, at, {}))
    const [, template, jsonPath, textPath] = format
    const parts = [JSON.stringify(get(jsonPath!, at, {})), String(get(textPath!, at, {}))]
    return template!.replace(/\{\}/g, () => parts.shift()!)
  }

  const output = await run(definition, input, { Execution: { Input: input } })
  return { output, execution }
}
