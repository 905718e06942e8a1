/** AWS APIs with no local server, answered by aws-sdk-client-mock so tests can assert the exact requests. */
import { CreateTableCommand, EntityNotFoundException, GetTableCommand, GlueClient } from '@aws-sdk/client-glue'
import { mockClient } from 'aws-sdk-client-mock'

/** A Glue client whose catalog starts empty: GetTable finds nothing, CreateTable succeeds. */
export const emptyGlueCatalog = () => {
  const client = new GlueClient({ region: 'us-east-1' })
  const mock = mockClient(client)
  const reset = () => {
    mock.reset()
    mock.on(GetTableCommand).rejects(new EntityNotFoundException({ message: 'no such table', $metadata: {} }))
    mock.on(CreateTableCommand).resolves({})
  }
  reset()
  return { client, mock, reset }
}
