// The OpenAPI part of what the server offers a client before it shows anything: the rule kinds
// (`GET /kinds`, kinds-route.ts) and the log types ingested (`GET /log-types`, log-types-route.ts).
import { simple } from '../rules/kinds/simple.js'
import { kindSummary } from './kinds-route.js'
import { AUTH_ERRORS, err, json, type Obj, ref } from './openapi-common.js'
import { LOG_TYPE_EXAMPLE } from './openapi-examples.js'

const strList = { type: 'array', items: { type: 'string' } }

export const CATALOG_SCHEMAS: Record<string, Obj> = {
  Kind: {
    type: 'object',
    description: 'A rule kind, as the API names it.',
    required: [
      'name',
      'path',
      'label',
      'title',
      'idField',
      'idFileKey',
      'python',
      'pythonView',
      'logTypeFilter',
      'readOnlyFields',
      'template',
    ],
    properties: {
      name: { type: 'string', description: 'The kind as rules, alerts and rule errors name it (`ruleKind`).' },
      path: { type: 'string', description: 'Its collection below the base path, e.g. `simple-rules`.' },
      label: { type: 'string', description: 'What people call it, e.g. `Simple`.' },
      title: { type: 'string', description: 'Its OpenAPI schema and tag name, e.g. `SimpleRule`.' },
      idField: { type: 'string', description: 'The API field holding a rule’s id.' },
      idFileKey: { type: 'string', description: 'The file key holding it (`RuleID`, `PolicyID`).' },
      python: { type: 'boolean', description: 'Whether its rules carry Python code (the `body` field).' },
      pythonView: {
        type: 'boolean',
        description: 'Whether `include-python=true` returns its rules as generated Python (`pythonBody`).',
      },
      logTypeFilter: { type: 'boolean', description: 'Whether its list takes the `log-type` filter.' },
      readOnlyFields: { ...strList, description: 'Fields the server computes; a write ignores them.' },
      template: {
        type: 'object',
        additionalProperties: true,
        description: 'The body a new rule of the kind starts from: valid, its tests pass.',
      },
    },
  },
  KindList: {
    type: 'object',
    required: ['kinds'],
    properties: { kinds: { type: 'array', items: ref('Kind') } },
  },
  LogTypeField: {
    type: 'object',
    required: ['name', 'type', 'required', 'description'],
    properties: {
      name: { type: 'string', description: 'Its dotted path in a record, e.g. `metadata.timestamp`.' },
      type: { type: 'string', description: '`string`, `boolean`, `integer`, `list of strings` or `object`.' },
      required: { type: 'boolean' },
      description: { type: 'string' },
    },
  },
  LogType: {
    type: 'object',
    required: ['name', 'table', 'fields'],
    properties: {
      name: { type: 'string', description: 'As rules name it in `logTypes`.' },
      table: { type: 'string', description: 'The table its records are queried from, as Panther names it.' },
      fields: { type: 'array', items: ref('LogTypeField') },
    },
  },
  LogTypeList: {
    type: 'object',
    required: ['logTypes'],
    properties: { logTypes: { type: 'array', items: ref('LogType') } },
  },
}

const answers = (description: string, schema: string, example: unknown) => ({
  '200': { description, content: json(ref(schema), example) },
  '400': err('An unknown query parameter.'),
  '401': AUTH_ERRORS['401'],
})

export function catalogPaths(): Record<string, unknown> {
  return {
    '/kinds': {
      get: {
        tags: ['Operations'],
        summary: 'The rule kinds',
        description:
          'Every rule kind the server keeps, with its collection, label, id field, whether it has Python code or a `log-type` filter, its read-only fields and the template of a new rule, so a client (the console) lists no kind of its own. Any known token may ask, whatever its permissions.',
        operationId: 'listKinds',
        responses: answers('The kinds, in the order the API lists them.', 'KindList', {
          kinds: [kindSummary(simple)],
        }),
      },
    },
    '/log-types': {
      get: {
        tags: ['Operations'],
        summary: 'The log types ingested',
        description:
          'Every log type this server ingests: its name (as rules name it in `logTypes`), its table, and its fields. Any known token may ask, whatever its permissions.',
        operationId: 'listLogTypes',
        responses: answers('The log types.', 'LogTypeList', {
          logTypes: [LOG_TYPE_EXAMPLE],
        }),
      },
    },
  }
}
