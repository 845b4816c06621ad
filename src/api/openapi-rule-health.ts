// The OpenAPI part of GET /rule-health (rule-health-route.ts): the RuleHealth schema, its page, and the path.
import { err, json, type Obj, ref } from './openapi-common.js'

const time = (description: string) => ({ type: 'string', format: 'date-time', nullable: true, description })
const q = (name: string, description: string, schema: Obj = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
})

export const RULE_HEALTH_SCHEMAS: Obj = {
  RuleHealth: {
    type: 'object',
    required: ['ruleId', 'kind', 'enabled', 'lastAlertAt', 'alertsLast24h', 'lastError', 'lastRunAt', 'nextRunAt'],
    properties: {
      ruleId: { type: 'string' },
      kind: { type: 'string', description: 'The rule’s kind (`python`, `simple`, `correlation`, …).' },
      enabled: { type: 'boolean' },
      lastAlertAt: time('When the rule’s newest alert was created; null when it has none.'),
      alertsLast24h: { type: 'integer', minimum: 0, description: 'Its alerts created in the last 24 hours.' },
      lastError: {
        type: 'object',
        nullable: true,
        required: ['time', 'message'],
        properties: {
          time: { type: 'string', format: 'date-time' },
          message: { type: 'string', description: 'The first line of the message, at most 200 characters.' },
        },
        description: 'The rule’s latest rule error still held (GET /rule-errors has them all); null when none.',
      },
      lastRunAt: time(
        'Correlation rules, scheduled rules (through the scheduled queries they name) and scheduled queries: when the last run started; null otherwise or before the first run.',
      ),
      nextRunAt: time('The same rules: when the next run is planned; null otherwise or when none is.'),
    },
  },
  RuleHealthPage: {
    type: 'object',
    required: ['results', 'next'],
    properties: {
      results: { type: 'array', items: ref('RuleHealth') },
      next: { type: 'string', nullable: true, description: 'The cursor of the next page; null on the last page.' },
    },
  },
}

export function ruleHealthPaths(): Obj {
  return {
    '/rule-health': {
      get: {
        tags: ['Alerts'],
        summary: 'Rule health',
        description:
          'Per served rule, in rule id order: its newest alert, its alerts of the last 24 hours, its latest rule error and, for scheduled rules, the last and next run. Read from memory (no stored event is read). Needs View Rules (counts and times only: no alert content).',
        operationId: 'listRuleHealth',
        parameters: [
          q('rule-id', 'Only these rule ids (repeated keys or a comma list); ids no served rule has are left out.'),
          q('cursor', 'The `next` of the previous page, as it is.'),
          q('limit', 'Page size, 1–1000 (default 100).', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
        ],
        responses: {
          '200': { description: 'A page of rule health.', content: json(ref('RuleHealthPage')) },
          '400': err('A bad limit or cursor, or an unknown parameter.'),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the View Rules permission.'),
        },
      },
    },
  }
}
