// The OpenAPI part of POST /correlation-rules/{id}/run (correlation-run-route.ts): the
// CorrelationRun schema (what one run did) and the path.
import { kindDef } from '../rules/kinds/index.js'
import { err, json, type Obj, ref } from './openapi-common.js'

const time = { type: 'string', format: 'date-time' }
const ids = (description: string) => ({ type: 'array', items: { type: 'string' }, description })

export const CORRELATION_RUN_SCHEMAS: Obj = {
  CorrelationRun: {
    type: 'object',
    required: [
      'ruleId',
      'evaluatedAt',
      'window',
      'outcome',
      'matches',
      'signalsCounted',
      'alertsCreated',
      'alertsUpdated',
      'durationMs',
      'error',
    ],
    properties: {
      ruleId: { type: 'string' },
      evaluatedAt: time,
      window: {
        type: 'object',
        required: ['from', 'to'],
        properties: { from: time, to: time },
        description:
          'The signals’ event times evaluated: [from, to) = [evaluatedAt − LookbackWindowMinutes, evaluatedAt).',
      },
      outcome: { type: 'string', enum: ['ok', 'error'], description: 'error: the rule could not be evaluated.' },
      matches: { type: 'integer', description: 'Join values that matched.' },
      signalsCounted: { type: 'integer', description: 'Signals counted for the first time (never twice).' },
      alertsCreated: ids('The alerts this run created.'),
      alertsUpdated: ids('Existing alerts this run added events to.'),
      durationMs: { type: 'integer' },
      error: {
        type: 'string',
        nullable: true,
        description: 'The rule error of the run (also in GET /rule-errors); null when it ran.',
      },
    },
  },
}

export function correlationRunPaths(): Obj {
  return {
    [`/${kindDef('correlation').apiPath}/{id}/run`]: {
      post: {
        tags: [kindDef('correlation').title],
        summary: 'Run a correlation rule now',
        description:
          'Evaluates one enabled correlation rule now over its lookback window, after detection has evaluated what was accepted before (as a scheduled run does), in the same queue as the scheduled runs; its alerts are stored and routed like any. A window already evaluated adds nothing twice. No body is needed. Needs Manage Rules.',
        operationId: 'runCorrelationRule',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The rule id.' },
        ],
        responses: {
          '200': { description: 'What the run did.', content: json(ref('CorrelationRun')) },
          '400': err('A query parameter, or a body that is not valid JSON.'),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the Manage Rules permission.'),
          '404': err('No served correlation rule has this id.'),
          '409': err('The rule is disabled, or a run of it is in progress or due.'),
          '413': err('A body was sent (none is needed) and it is too large.'),
          '415': err('A body was sent (none is needed) and it is not JSON.'),
          '501': err('Correlation rules are not available on the configured backend.'),
          '503': {
            ...err(
              'Detection has stopped or is shutting down, or it has not evaluated the records accepted before now within the rule’s TimeoutMinutes (at most 30 s): nothing ran.',
            ),
            headers: { 'Retry-After': { description: 'Seconds.', schema: { type: 'integer', minimum: 1 } } },
          },
        },
      },
    },
  }
}
