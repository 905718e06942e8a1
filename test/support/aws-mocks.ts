/** AWS APIs with no local server, answered by aws-sdk-client-mock so tests can assert the exact requests. */
import {
  AlreadyExistsException,
  CreateTableCommand,
  EntityNotFoundException,
  GetTableCommand,
  GlueClient,
  InvalidInputException,
  type Table,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import { mockClient } from 'aws-sdk-client-mock'
import { glueTableInputProblems } from '../../functions/export/catalog/glue-rules.ts'
import { glueRequestProblems } from '../aws/glue-model.ts'

const metadata = { $metadata: {} }

/**
 * A Glue catalog in memory that rejects what Glue rejects: a request against the Glue API model's lengths and
 * patterns (ValidationException, test/aws/glue-model.ts), an input against Glue's documented rules
 * (InvalidInputException), CreateTable of an existing table (AlreadyExistsException), GetTable or UpdateTable of a
 * missing one (EntityNotFoundException). `tables` is keyed `database.name`; GetTable answers what Glue would.
 */
export const glueCatalogStandIn = () => {
  const client = new GlueClient({ region: 'us-east-1' })
  const mock = mockClient(client)
  const tables = new Map<string, Table>()
  const key = (database: string | undefined, name: string | undefined) => `${database}.${name}`
  const validate = (operation: 'CreateTable' | 'UpdateTable', request: object, input: TableInput | undefined) => {
    const modelProblems = glueRequestProblems(operation, request)
    if (modelProblems.length > 0) {
      throw Object.assign(new Error(modelProblems.join('; ')), { name: 'ValidationException', ...metadata })
    }
    const problems = input ? glueTableInputProblems(input) : ['TableInput is required']
    if (problems.length > 0) throw new InvalidInputException({ message: problems.join('; '), ...metadata })
    return input!
  }
  const stored = (database: string | undefined, input: TableInput): Table => ({
    ...structuredClone(input),
    Name: input.Name!,
    DatabaseName: database,
    CreateTime: new Date(0),
    UpdateTime: new Date(),
    IsRegisteredWithLakeFormation: false,
    CatalogId: '123456789012',
  })
  const reset = () => {
    mock.reset()
    tables.clear()
    mock.on(GetTableCommand).callsFake(async ({ DatabaseName, Name }) => {
      const table = tables.get(key(DatabaseName, Name))
      if (!table) throw new EntityNotFoundException({ message: `Table ${Name} not found.`, ...metadata })
      return { Table: structuredClone(table) }
    })
    mock.on(CreateTableCommand).callsFake(async (request) => {
      const { DatabaseName, TableInput: input } = request
      const valid = validate('CreateTable', request, input)
      if (tables.has(key(DatabaseName, valid.Name))) {
        throw new AlreadyExistsException({ message: `Table already exists.`, ...metadata })
      }
      tables.set(key(DatabaseName, valid.Name), stored(DatabaseName, valid))
      return {}
    })
    mock.on(UpdateTableCommand).callsFake(async (request) => {
      const { DatabaseName, TableInput: input } = request
      const valid = validate('UpdateTable', request, input)
      if (!tables.has(key(DatabaseName, valid.Name))) {
        throw new EntityNotFoundException({ message: `Table ${valid.Name} not found.`, ...metadata })
      }
      tables.set(key(DatabaseName, valid.Name), stored(DatabaseName, valid))
      return {}
    })
  }
  reset()
  return { client, mock, tables, reset }
}

/** A Glue client whose catalog starts empty (the stand-in above). */
export const emptyGlueCatalog = glueCatalogStandIn
