// The OpenAPI part of the rule-error routes (rule-error-routes.ts): the RuleError and RuleErrorGroup
// schemas and their pages, and the paths of /rule-errors, /rule-errors/groups and /rule-errors/record.
import { err, json, type Obj, ref } from './openapi-common.js'

const AUTH = {
  '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
  '403': err('The token lacks the View Alerts permission.'),
}
const time = { type: 'string', format: 'date-time' }
const page = (item: Obj) => ({
  type: 'object',
  required: ['results', 'next'],
  properties: {
    results: { type: 'array', items: item },
    next: { type: 'string', nullable: true, description: 'The cursor of the next page; null on the last page.' },
  },
})
const q = (name: string, description: string, schema: Obj = { type: 'string' }, required = false) => ({
  name,
  in: 'query',
  required,
  schema,
  description,
})
const FILTERS = [
  q('rule-id', 'Any of these rule ids (repeated keys or a comma list).'),
  q('since', 'Only errors at or after this RFC 3339 time.', time),
  q('cursor', 'The `next` of the previous page, as it is.'),
  q('limit', 'Page size, 1–1000 (default 100).', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
]
const RECORD = {
  type: 'object',
  nullable: true,
  required: ['partition', 'offset'],
  properties: { partition: { type: 'string' }, offset: { type: 'integer' } },
  description:
    'The stored line (file under logs/ and byte offset; `GET /rule-errors/record` reads it); null when the error belongs to no record (a rule that could not be compiled, a correlation run).',
}

export const RULE_ERROR_SCHEMAS: Obj = {
  RuleError: {
    type: 'object',
    required: ['ruleId', 'revision', 'time', 'record', 'error'],
    properties: {
      ruleId: { type: 'string' },
      revision: { type: 'string', nullable: true },
      time: time,
      record: RECORD,
      error: { type: 'string', description: 'The message, with the traceback of Python rule code.' },
    },
  },
  RuleErrorPage: page(ref('RuleError')),
  RuleErrorGroup: {
    type: 'object',
    required: ['ruleId', 'ruleKind', 'error', 'count', 'firstTime', 'lastTime', 'revision', 'record'],
    properties: {
      ruleId: { type: 'string' },
      ruleKind: { type: 'string', nullable: true, description: 'The served rule’s kind; null when none has this id.' },
      error: { type: 'string', description: 'The text shared by the errors of this entry.' },
      count: { type: 'integer', minimum: 1, description: 'How many errors (since `since`, when given).' },
      firstTime: time,
      lastTime: time,
      revision: { type: 'string', nullable: true, description: 'The revision of the latest error.' },
      record: { ...RECORD, description: `The latest record with this error. ${RECORD.description}` },
    },
  },
  RuleErrorGroupPage: page(ref('RuleErrorGroup')),
}

export function ruleErrorPaths(): Obj {
  return {
    '/rule-errors': {
      get: {
        tags: ['Alerts'],
        summary: 'List rule errors',
        description: 'Each error, newest first. Needs View Alerts.',
        operationId: 'listRuleErrors',
        parameters: FILTERS,
        responses: {
          '200': { description: 'A page of rule errors.', content: json(ref('RuleErrorPage')) },
          '400': err('A bad limit, cursor or time, or an unknown parameter.'),
          ...AUTH,
        },
      },
    },
    '/rule-errors/groups': {
      get: {
        tags: ['Alerts'],
        summary: 'Rule errors by rule and error text',
        description:
          'One entry per rule and error text with its count, the latest first (ties by rule id, then text). Needs View Alerts.',
        operationId: 'listRuleErrorGroups',
        parameters: FILTERS,
        responses: {
          '200': { description: 'A page of entries.', content: json(ref('RuleErrorGroupPage')) },
          '400': err('A bad limit, cursor or time, or an unknown parameter.'),
          ...AUTH,
        },
      },
    },
    '/rule-errors/record': {
      get: {
        tags: ['Alerts'],
        summary: 'The record of a rule error',
        description:
          'The stored record (as stored) at the `record` of a rule error. Only locations that some rule error names are read. Needs View Alerts.',
        operationId: 'getRuleErrorRecord',
        parameters: [
          q('partition', 'The `record.partition` of a rule error.', { type: 'string' }, true),
          q('offset', 'The `record.offset` of a rule error.', { type: 'integer', minimum: 0 }, true),
        ],
        responses: {
          '200': {
            description: 'The record as stored.',
            content: json({ type: 'object', additionalProperties: true }),
          },
          '400': err('partition or offset missing or malformed, or an unknown parameter.'),
          '404': err('No rule error names a stored record at this location (or it cannot be read).'),
          ...AUTH,
        },
      },
    },
  }
}
