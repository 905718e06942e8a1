/**
 * A loopback endpoint for the AWS JSON 1.1 services the function calls (Glue and Secrets Manager; the SDK honours
 * AWS_ENDPOINT_URL_GLUE and AWS_ENDPOINT_URL_SECRETS_MANAGER), deciding as AWS does: IAM first (AccessDeniedException
 * for what the role may not do, on every resource Glue authorizes an operation on), then Glue's API model (a
 * ValidationException for a request that breaks its lengths and patterns), then the catalog kept in memory.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { glueRequestProblems } from './glue-model.ts'
import type { AuthorizationRequest, Authorizer } from './iam.ts'
import { EXPORTER_ROLE_ARN, LOCAL_ACCOUNT, LOCAL_REGION } from './role-policy.ts'

interface JsonBody {
  readonly SecretId?: string
  readonly DatabaseName?: string
  readonly Name?: string
  readonly TableInput?: { readonly Name?: string } & Record<string, unknown>
  readonly VersionId?: string
}

export interface JsonRequest {
  readonly target: string
  readonly body: JsonBody
  readonly status: number
  readonly reply: Record<string, unknown>
}

const GLUE_ARN = `arn:aws:glue:${LOCAL_REGION}:${LOCAL_ACCOUNT}`

/** Glue authorizes a table operation on the catalog, the database and the table, each with the same action. */
const glueAuthorizations = (operation: string, body: JsonBody): AuthorizationRequest[] => {
  const action = `glue:${operation}`
  const database = body.DatabaseName ?? ''
  const catalog = [`${GLUE_ARN}:catalog`, `${GLUE_ARN}:database/${database}`]
  if (operation === 'GetDatabase')
    return [`${GLUE_ARN}:catalog`, `${GLUE_ARN}:database/${body.Name}`].map((resource) => ({ action, resource }))
  const table = body.Name ?? body.TableInput?.Name ?? ''
  return [...catalog, `${GLUE_ARN}:table/${database}/${table}`].map((resource) => ({ action, resource }))
}

export interface JsonEndpointOptions {
  readonly authorizer: Authorizer
  /** The token's secret, and its value. */
  readonly secret: { readonly arn: string; readonly value: string }
  /** Other secrets there are (the pseudonymization key's). @default none */
  readonly otherSecrets?: readonly { readonly arn: string; readonly value: string }[]
}

export const startJsonEndpoint = async ({ authorizer, secret, otherSecrets = [] }: JsonEndpointOptions) => {
  const requests: JsonRequest[] = []
  const glueTables = new Map<string, NonNullable<JsonBody['TableInput']>>()
  /** Glue numbers a table's versions from 1; an UpdateTable that names another than the current one is refused. */
  const glueVersions = new Map<string, number>()

  const denied = (request: AuthorizationRequest): [number, Record<string, unknown>] => [
    400,
    {
      __type: 'AccessDeniedException',
      Message: `User: ${EXPORTER_ROLE_ARN} is not authorized to perform: ${request.action} on resource: ${request.resource} because no identity-based policy allows the ${request.action} action`,
    },
  ]

  const secretsManager = async (operation: string, body: JsonBody): Promise<[number, Record<string, unknown>]> => {
    const request = { action: `secretsmanager:${operation}`, resource: body.SecretId ?? '' }
    if (!(await authorizer.decide(request)).allowed) return denied(request)
    if (operation !== 'GetSecretValue') return [400, { __type: 'UnknownOperationException', message: operation }]
    const found = [secret, ...otherSecrets].find((candidate) => candidate.arn === body.SecretId)
    return found !== undefined
      ? [200, { ARN: found.arn, Name: 'secret', SecretString: found.value, VersionStages: ['AWSCURRENT'] }]
      : [400, { __type: 'ResourceNotFoundException', Message: "Secrets Manager can't find the specified secret." }]
  }

  const glue = async (operation: string, body: JsonBody): Promise<[number, Record<string, unknown>]> => {
    for (const request of glueAuthorizations(operation, body)) {
      if (!(await authorizer.decide(request)).allowed) return denied(request)
    }
    const problems = glueRequestProblems(operation, body)
    if (problems.length > 0) {
      return [
        400,
        {
          __type: 'ValidationException',
          message: `${problems.length} validation error(s) detected: ${problems.join('; ')}`,
        },
      ]
    }
    const key = `${body.DatabaseName}.${body.Name ?? body.TableInput?.Name}`
    switch (operation) {
      case 'GetTable':
        return glueTables.has(key)
          ? [
              200,
              {
                Table: {
                  ...glueTables.get(key),
                  DatabaseName: body.DatabaseName,
                  VersionId: String(glueVersions.get(key)),
                },
              },
            ]
          : [400, { __type: 'EntityNotFoundException', Message: `Table ${body.Name} not found.` }]
      case 'CreateTable':
        if (glueTables.has(key)) return [400, { __type: 'AlreadyExistsException', Message: 'Table already exists.' }]
        glueTables.set(key, body.TableInput!)
        glueVersions.set(key, 1)
        return [200, {}]
      case 'UpdateTable':
        if (!glueTables.has(key)) return [400, { __type: 'EntityNotFoundException', Message: 'Table not found.' }]
        if (body.VersionId !== undefined && body.VersionId !== String(glueVersions.get(key))) {
          return [
            400,
            {
              __type: 'ConcurrentModificationException',
              Message: 'Update table failed due to concurrent modifications.',
            },
          ]
        }
        glueTables.set(key, body.TableInput!)
        glueVersions.set(key, (glueVersions.get(key) ?? 0) + 1)
        return [200, {}]
      default:
        return [400, { __type: 'UnknownOperationException', message: operation }]
    }
  }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as JsonBody
    const target = String(req.headers['x-amz-target'])
    const [service, operation = ''] = target.split('.')
    const [status, reply] =
      service === 'secretsmanager'
        ? await secretsManager(operation, body)
        : service === 'AWSGlue'
          ? await glue(operation, body)
          : [400, { __type: 'UnknownOperationException', message: target }]
    requests.push({ target, body, status, reply })
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' })
    res.end(JSON.stringify(reply))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { endpoint, requests, glueTables, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

export type RunningJsonEndpoint = Awaited<ReturnType<typeof startJsonEndpoint>>
