/** The OpenAPI 3.0 description the emulator serves at /apidoc (the real service serves its own there). */

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

const exportOperation = (format: 'csv' | 'xlsx', mediaType: string) => ({
  operationId: format === 'csv' ? 'exportTableCsv' : 'exportTableXlsx',
  summary: `Export a saved table as ${format.toUpperCase()}`,
  description: 'All rows and all columns of the saved table. The body is the file; write it to disk unchanged.',
  tags: ['tables'],
  parameters: [
    {
      name: 'tableId',
      in: 'path',
      required: true,
      description: 'Id of the saved table: the last segment of its permalink.',
      schema: { type: 'string', example: '1001' },
    },
  ],
  responses: {
    '200': {
      description: `The table as ${format.toUpperCase()}.`,
      headers: {
        'Content-Disposition': { schema: { type: 'string', example: `attachment; filename="1001.${format}"` } },
      },
      content: { [mediaType]: { schema: { type: 'string', format: 'binary' } } },
    },
    '401': errorResponse('The token is missing, invalid, expired or revoked.'),
    '403': errorResponse("The token's user may not read this table."),
    '404': errorResponse('The table does not exist, or its export is disabled.'),
    '5XX': errorResponse('Server or load problem; retry later or export a smaller table.'),
  },
})

export const openApiDocument = (baseUrl: string) => ({
  openapi: '3.0.3',
  info: {
    title: 'IT Asset Inventory - Data Export API (emulator)',
    version: '1.0.0',
    description:
      'Local stand-in of the inventory service. Every operation except this document needs the `token` header.',
  },
  servers: [{ url: baseUrl }],
  security: [{ token: [] }],
  tags: [{ name: 'users' }, { name: 'tables' }, { name: 'documentation' }],
  paths: {
    '/apidoc': {
      get: {
        operationId: 'getApiDoc',
        summary: 'This OpenAPI document',
        tags: ['documentation'],
        security: [],
        responses: { '200': { description: 'OpenAPI 3.0 document.', content: { 'application/json': {} } } },
      },
    },
    '/rest/usermanager/me': {
      get: {
        operationId: 'getCurrentUser',
        summary: 'The user that owns the token',
        tags: ['users'],
        responses: {
          '200': {
            description: 'The token works; this is its owner.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } },
          },
          '401': errorResponse('The token is missing, invalid, expired or revoked.'),
        },
      },
    },
    '/rest/tables/{tableId}/csv': { get: exportOperation('csv', 'text/csv') },
    '/rest/tables/{tableId}/xlsx': {
      get: exportOperation('xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'),
    },
  },
  components: {
    securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'token' } },
    schemas: {
      User: {
        type: 'object',
        required: ['id', 'username', 'displayName', 'email', 'roles'],
        properties: {
          id: { type: 'integer' },
          username: { type: 'string' },
          displayName: { type: 'string' },
          email: { type: 'string', format: 'email' },
          roles: { type: 'array', items: { type: 'string' } },
        },
      },
      Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
    },
  },
})
