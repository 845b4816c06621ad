// The OpenAPI 3.0.3 document, generated from the same JSON Schemas the server validates with
// (rules/schemas.ts), so the contract and the checks cannot disagree. Schemas stay within the
// subset OpenAPI 3.0 and draft-07 share; `readOnly` marks the fields a write ignores.
import { KINDS, kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { readOnlyFieldsOf, responseSchema, writeSchema } from '../rules/schemas.js'
import { MAX_CHANGE_REASON } from './rule-limits.js'

const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

function kindPaths(kind: RuleKind): Record<string, unknown> {
  const def = kindDef(kind)
  const name = def.title
  const ref = { $ref: `#/components/schemas/${name}` }
  const writeRef = { $ref: `#/components/schemas/${name}Write` }
  const q = (n: string, schema: Record<string, unknown>, description: string) => ({
    name: n,
    in: 'query',
    required: false,
    schema,
    description,
  })
  const bool = (d: boolean) => ({ type: 'boolean', default: d })
  const list = { type: 'array', items: { type: 'string' } }
  const listParams = [
    q('cursor', { type: 'string' }, 'the `next` of the previous page'),
    q('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, 'page size'),
    q('name-contains', { type: 'string' }, 'case-insensitive substring of displayName (or id)'),
    q('state', { type: 'string', enum: ['enabled', 'disabled'] }, 'enabled or disabled rules'),
    q('severity', list, 'any of these severities'),
    q('tag', list, 'has any of these tags (case-insensitive)'),
    q('created-by', { type: 'string' }, 'createdBy.id equals'),
    q('last-modified-by', { type: 'string' }, 'lastModifiedBy.id equals'),
    ...def.listFilters.map((f) => q(f.param, list, f.description)),
    ...(def.pythonView ? [q('include-python', bool(false), 'also return pythonBody')] : []),
  ]
  const writeParams = [
    q('run-tests-first', bool(true), 'run the unit tests before saving'),
    q('run-tests-only', bool(false), 'run the unit tests and save nothing'),
    {
      name: 'X-Change-Reason',
      in: 'header',
      required: false,
      schema: { type: 'string', maxLength: MAX_CHANGE_REASON },
      description: 'becomes the commit message body',
    },
  ]
  const common = {
    '401': err('missing or unknown token'),
    '403': err('the token lacks the permission'),
    '501': err('not available in this build or backend'),
    '503': err('cannot be done right now'),
  }
  const body = { required: true, content: { 'application/json': { schema: writeRef } } }
  const ok = (d: string) => ({ description: d, content: { 'application/json': { schema: ref } } })
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } }
  const tag = [name]
  return {
    [`/${def.apiPath}`]: {
      get: {
        tags: tag,
        operationId: `list${name}s`,
        parameters: listParams,
        responses: {
          '200': {
            description: 'a page of rules',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['results', 'next'],
                  properties: { results: { type: 'array', items: ref }, next: { type: 'string', nullable: true } },
                },
              },
            },
          },
          '400': err('bad query'),
          ...common,
        },
      },
      post: {
        tags: tag,
        operationId: `create${name}`,
        parameters: writeParams,
        requestBody: body,
        responses: {
          '200': ok('the saved rule'),
          '204': { description: 'run-tests-only: every test passed' },
          '400': err('invalid body or failed tests'),
          '409': err('the id exists'),
          '413': err('body too large'),
          '415': err('body is not JSON'),
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}`]: {
      parameters: [idParam],
      get: {
        tags: tag,
        operationId: `get${name}`,
        parameters: def.pythonView ? [q('include-python', bool(false), 'also return pythonBody')] : [],
        responses: { '200': ok('the rule'), '404': err('no such rule'), ...common },
      },
      put: {
        tags: tag,
        operationId: `replace${name}`,
        parameters: writeParams,
        requestBody: body,
        responses: {
          '200': ok('the rule (it existed)'),
          '201': ok('the rule (it was created)'),
          '204': { description: 'run-tests-only: every test passed' },
          '400': err('invalid body, failed tests, or body id differs from the path id'),
          '409': err('the id belongs to another kind'),
          '413': err('body too large'),
          '415': err('body is not JSON'),
          ...common,
        },
      },
      delete: {
        tags: tag,
        operationId: `delete${name}`,
        responses: { '204': { description: 'deleted' }, '404': err('no such rule'), ...common },
      },
    },
  }
}

export function openApiDocument(basePath: string): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    Error: {
      type: 'object',
      required: ['message'],
      properties: {
        message: { type: 'string' },
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'string' },
              message: { type: 'string' },
              line: { type: 'integer' },
              column: { type: 'integer' },
            },
          },
        },
        testResults: { type: 'array', items: { type: 'object' } },
        requestId: { type: 'string' },
      },
    },
  }
  for (const { name: k, title } of KINDS) {
    schemas[title] = responseSchema(k)
    // Read-only fields may be sent back (GET → edit → PUT) and are ignored, whatever their value.
    const write = writeSchema(k) as { properties: Record<string, unknown> }
    const ignored = Object.fromEntries(
      [...readOnlyFieldsOf(k)].map((f) => [f, { readOnly: true, description: 'read-only: ignored in writes' }]),
    )
    schemas[`${title}Write`] = { ...write, properties: { ...write.properties, ...ignored } }
  }
  const paths: Record<string, unknown> = {}
  for (const { name: k } of KINDS) Object.assign(paths, kindPaths(k))
  paths['/status'] = {
    get: {
      operationId: 'getStatus',
      responses: { '200': { description: 'reconcile status' }, '401': err('missing or unknown token') },
    },
  }
  paths['/reconcile'] = {
    post: {
      operationId: 'reconcile',
      responses: {
        '200': { description: 'reconcile ran' },
        '401': err('missing or unknown token'),
        '403': err('lacks Manage Rules'),
      },
    },
  }
  return {
    openapi: '3.0.3',
    info: { title: 'rulekeeper', version: '1.0', description: 'Detection rules kept in Git behind a REST API.' },
    servers: [{ url: basePath === '/' ? '/' : basePath.replace(/\/$/, '') }],
    components: { schemas, securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
    security: [{ apiKey: [] }],
    paths,
  }
}
