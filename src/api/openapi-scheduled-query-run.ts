// The OpenAPI part of POST /scheduled-queries/{name}/run (scheduled-query-run-route.ts): the
// ScheduledQueryRun schema (what one run did) and the path.
import { err, json, type Obj, ref } from './openapi-common.js'

const time = { type: 'string', format: 'date-time' }
const ids = (description: string) => ({ type: 'array', items: { type: 'string' }, description })

export const SCHEDULED_QUERY_RUN_SCHEMAS: Obj = {
  ScheduledQueriesStatus: {
    type: 'object',
    description:
      'Scheduled queries on their schedule (docs/queries.md): each enabled scheduled_query with a valid Schedule that an enabled scheduled rule names. GET /status only.',
    required: ['queries'],
    properties: {
      queries: {
        type: 'array',
        items: {
          type: 'object',
          required: [
            'name',
            'schedule',
            'lookback',
            'lookbackWindowSeconds',
            'lastSlot',
            'nextSlotAt',
            'lastRun',
            'lastError',
            'runs',
            'errors',
          ],
          properties: {
            name: { type: 'string' },
            schedule: {
              type: 'object',
              required: ['timeoutMinutes'],
              properties: {
                rateMinutes: { type: 'integer' },
                cronExpression: { type: 'string' },
                timeoutMinutes: { type: 'integer' },
              },
            },
            lookback: {
              type: 'boolean',
              nullable: true,
              description: 'The file’s Lookback, as written (null: absent).',
            },
            lookbackWindowSeconds: { type: 'integer', nullable: true },
            lastSlot: { ...time, nullable: true, description: 'The last slot run (durable: never run twice).' },
            nextSlotAt: { ...time, nullable: true },
            lastRun: {
              type: 'object',
              nullable: true,
              description:
                'The last run (scheduled or manual), as the run route answers it but with its alerts counted.',
              required: [
                'trigger',
                'slot',
                'startedAt',
                'rows',
                'matches',
                'alertsCreated',
                'durationMs',
                'outcome',
                'error',
              ],
              properties: {
                trigger: { type: 'string', enum: ['schedule', 'manual'] },
                slot: time,
                startedAt: time,
                rows: { type: 'integer' },
                cut: { type: 'boolean' },
                rules: { type: 'array', items: { type: 'string' } },
                matches: { type: 'integer' },
                alertsCreated: { type: 'integer' },
                ruleErrors: { type: 'integer' },
                queryMs: { type: 'integer' },
                durationMs: { type: 'integer' },
                outcome: { type: 'string', enum: ['ok', 'error'] },
                error: { type: 'string', nullable: true },
              },
            },
            lastError: {
              type: 'object',
              nullable: true,
              required: ['time', 'error'],
              properties: { time, error: { type: 'string' } },
            },
            runs: { type: 'integer' },
            errors: { type: 'integer' },
          },
        },
      },
    },
  },
  ScheduledQueryRun: {
    type: 'object',
    required: [
      'query',
      'trigger',
      'slot',
      'startedAt',
      'rows',
      'cut',
      'rules',
      'matches',
      'alertsCreated',
      'alertsUpdated',
      'ruleErrors',
      'queryMs',
      'durationMs',
      'outcome',
      'error',
    ],
    properties: {
      query: { type: 'string', description: 'The QueryName.' },
      trigger: { type: 'string', enum: ['schedule', 'manual'] },
      slot: { ...time, description: 'The time the macros were relative to: the slot, or the time of a manual run.' },
      startedAt: time,
      rows: { type: 'integer', description: 'Rows the query returned (at most 10,000).' },
      cut: { type: 'boolean', description: 'More rows followed and were not read.' },
      rules: ids('The enabled scheduled rules every row went through.'),
      matches: { type: 'integer', description: 'Rows matched, over all rules.' },
      alertsCreated: ids('The alerts this run created.'),
      alertsUpdated: ids('Existing alerts this run added events to.'),
      ruleErrors: { type: 'integer', description: 'Rule errors this run recorded (GET /rule-errors).' },
      queryMs: { type: 'integer', description: 'The query’s part of `durationMs`.' },
      durationMs: { type: 'integer', description: 'The whole run: the query, the rows through the rules, the commit.' },
      outcome: { type: 'string', enum: ['ok', 'error'], description: 'error: the query failed or timed out.' },
      error: {
        type: 'string',
        nullable: true,
        description: 'Why the query failed (also a rule error of each rule naming it); null when it ran.',
      },
    },
  },
}

export function scheduledQueryRunPaths(): Obj {
  return {
    '/scheduled-queries/{name}/run': {
      post: {
        tags: ['Queries'],
        summary: 'Run a scheduled query now',
        description:
          'Runs one enabled scheduled or saved query now (its macros relative to now, under its TimeoutMinutes), passes every row through each enabled scheduled rule naming it, and stores and routes their alerts like any; in the same queue as the scheduled runs, and recording no slot (the schedule keeps its own). No body is needed. Needs Manage Rules.',
        operationId: 'runScheduledQuery',
        parameters: [
          { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'The QueryName.' },
        ],
        responses: {
          '200': { description: 'What the run did.', content: json(ref('ScheduledQueryRun')) },
          '400': err('A query parameter, or a body that is not valid JSON.'),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the Manage Rules permission.'),
          '404': err('No served scheduled or saved query has this QueryName.'),
          '409': err(
            'The query is disabled, no enabled scheduled rule names it, or a run of it is in progress or due.',
          ),
          '413': err('A body was sent (none is needed) and it is too large.'),
          '415': err('A body was sent (none is needed) and it is not JSON.'),
          '503': err('The service is shutting down: nothing ran.'),
        },
      },
    },
  }
}
