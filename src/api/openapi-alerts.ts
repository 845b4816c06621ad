// The OpenAPI part of the alert API (alerts.md §3): the Alert and page schemas and the paths of
// /alerts, /alerts/{id} (GET, PATCH), /alerts/{id}/events and POST /replay (the triage schemas and
// writes: openapi-alert-triage.ts; rule errors: openapi-rule-errors.ts).
// Kept apart from openapi.ts so that the detection routes and their document change together.
import { STATUSES } from '../detect/alert-status.js'
import { SEVERITIES } from '../rules/model.js'
import { TRIAGE_SCHEMAS, triagePaths } from './openapi-alert-triage.js'
import { err, json, type Obj, ref } from './openapi-common.js'

const auth = (permission: string) => ({
  '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
  '403': err(`The token lacks the ${permission} permission.`),
})
const time = { type: 'string', format: 'date-time' }
const page = (item: Obj) => ({
  type: 'object',
  required: ['results', 'next'],
  properties: {
    results: { type: 'array', items: item },
    next: { type: 'string', nullable: true, description: 'The cursor of the next page; null on the last page.' },
  },
})
const q = (name: string, description: string, schema: Obj = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
})
const LIMIT = q('limit', 'Page size, 1–1000 (default 100).', {
  type: 'integer',
  minimum: 1,
  maximum: 1000,
  default: 100,
})
const CURSOR = q('cursor', 'The `next` of the previous page, as it is.')
const ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The alert id.' }

export const ALERT_SCHEMAS: Obj = {
  Alert: {
    type: 'object',
    required: [
      'id',
      'ruleId',
      'ruleKind',
      'revision',
      'severity',
      'title',
      'dedup',
      'alertContext',
      'logTypes',
      'eventCount',
      'firstEventTime',
      'lastEventTime',
      'createdAt',
      'updatedAt',
      'status',
      'description',
      'runbook',
      'reference',
      'summary',
      'destinations',
    ],
    properties: {
      id: { type: 'string', description: 'Derived from the rule id, the dedup string and the window start.' },
      ruleId: { type: 'string' },
      ruleKind: { type: 'string' },
      revision: { type: 'string', nullable: true, description: 'The commit of the served index of the first match.' },
      severity: { type: 'string', enum: [...SEVERITIES] },
      title: { type: 'string' },
      dedup: { type: 'string' },
      alertContext: { type: 'object', additionalProperties: true },
      logTypes: { type: 'array', items: { type: 'string' } },
      eventCount: { type: 'integer', minimum: 1 },
      firstEventTime: time,
      lastEventTime: time,
      createdAt: time,
      updatedAt: time,
      status: { type: 'string', enum: [...STATUSES] },
      description: { type: 'string' },
      runbook: { type: 'string' },
      reference: { type: 'string' },
      summary: {
        type: 'object',
        description: 'Per SummaryAttribute, the top 5 values over the alert’s events, by count, ties by value.',
        additionalProperties: {
          type: 'array',
          items: {
            type: 'object',
            required: ['value', 'count'],
            properties: { value: {}, count: { type: 'integer' } },
          },
        },
      },
      assignee: {
        type: 'string',
        nullable: true,
        description: 'Who works on the alert (`PATCH /alerts/{id}`); null: nobody. In `/alerts` and `/alerts/{id}`.',
      },
      destinations: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'state', 'attempts', 'lastError'],
          properties: {
            id: { type: 'string' },
            state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
            attempts: { type: 'integer' },
            lastError: { type: 'string', nullable: true },
          },
        },
      },
    },
  },
  ...TRIAGE_SCHEMAS,
  AlertPage: page(ref('Alert')),
  AlertEventPage: page({ type: 'object', additionalProperties: true, description: 'A record as stored.' }),
  ReplayRequest: {
    type: 'object',
    required: ['from', 'to'],
    additionalProperties: false,
    properties: {
      ruleIds: {
        type: 'array',
        maxItems: 1000,
        items: { type: 'string' },
        description: 'The rules to run (enabled or not); absent: every enabled rule.',
      },
      from: { ...time, description: 'Records whose event time is at or after this instant.' },
      to: { ...time, description: 'Records whose event time is before this instant.' },
      revision: { type: 'string', pattern: '^[0-9a-f]{40}$', description: 'A commit; absent: the served revision.' },
    },
  },
  ReplayResult: {
    type: 'object',
    required: ['records', 'matches', 'rules', 'alertCount'],
    properties: {
      records: { type: 'integer', description: 'Stored records with an event time in [from, to).' },
      matches: { type: 'integer', description: 'Matches and signals.' },
      rules: {
        type: 'array',
        description: 'Every rule run, by id, with its counts.',
        items: {
          type: 'object',
          required: ['ruleId', 'matches', 'alerts', 'errors'],
          properties: {
            ruleId: { type: 'string' },
            matches: { type: 'integer', description: 'Matches and signals of this rule.' },
            alerts: { type: 'integer', description: 'Alerts this rule would raise.' },
            errors: {
              type: 'integer',
              description: 'Evaluations that raised an error (and a batch rule that could not run at all, once).',
            },
          },
        },
      },
      alertCount: { type: 'integer', description: 'The alerts that would exist.' },
      alerts: {
        type: 'array',
        items: ref('Alert'),
        description:
          'The alerts that would exist (same ids), by first event time, then id. Only for a token with View Alerts too (alert content); absent otherwise.',
      },
    },
  },
}

export function alertPaths(): Obj {
  const view = auth('View Alerts')
  return {
    '/alerts': {
      get: {
        tags: ['Alerts'],
        summary: 'List alerts',
        description:
          'Newest `createdAt` first, ties by id. Filters take repeated keys or comma lists. Needs View Alerts.',
        operationId: 'listAlerts',
        parameters: [
          q('rule-id', 'Any of these rule ids.'),
          q('severity', 'Any of these severities.'),
          q('status', 'Any of these statuses.'),
          q('created-after', 'createdAt at or after this RFC 3339 time.', time),
          q('created-before', 'createdAt before this RFC 3339 time.', time),
          CURSOR,
          LIMIT,
        ],
        responses: {
          '200': { description: 'A page of alerts.', content: json(ref('AlertPage')) },
          '400': err('A bad limit, cursor, time or filter value, or an unknown parameter.'),
          ...view,
        },
      },
    },
    '/alerts/{id}': {
      get: {
        tags: ['Alerts'],
        summary: 'Get an alert',
        description: 'Needs View Alerts.',
        operationId: 'getAlert',
        parameters: [ID],
        responses: {
          '200': { description: 'The alert, its comments and history.', content: json(ref('AlertDetail')) },
          '404': err('No such alert.'),
          ...view,
        },
      },
      patch: {
        tags: ['Alerts'],
        summary: 'Change an alert’s status or assignee',
        description:
          '`status` and `assignee` are the writable fields (either or both); each change is added to the alert’s `history` with the token and the time. Stored with the alert (it survives a restart). Needs Manage Alerts.',
        operationId: 'patchAlert',
        parameters: [ID],
        requestBody: { required: true, content: json(ref('AlertPatch')) },
        responses: {
          '200': { description: 'The alert, `updatedAt` moved.', content: json(ref('AlertDetail')) },
          '400': err('An unknown status, a bad assignee, neither field, or any other field; nothing changed.'),
          '404': err('No such alert.'),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          ...auth('Manage Alerts'),
        },
      },
    },
    ...triagePaths(),
    '/alerts/{id}/events': {
      get: {
        tags: ['Alerts'],
        summary: 'The records of an alert',
        description: 'The matched records as stored, in stored position order. Needs View Alerts.',
        operationId: 'listAlertEvents',
        parameters: [ID, CURSOR, LIMIT],
        responses: {
          '200': { description: 'A page of records.', content: json(ref('AlertEventPage')) },
          '400': err('A bad limit or cursor.'),
          '404': err('No such alert.'),
          ...view,
        },
      },
    },
    '/alerts/{id}/deliveries/retry': {
      post: {
        tags: ['Alerts'],
        summary: 'Redeliver an alert',
        description:
          'Queues the alert’s failed deliveries again, with the same `Idempotency-Key` (a new round of attempts and budget). Needs Manage Alerts.',
        operationId: 'retryAlertDeliveries',
        parameters: [ID],
        responses: {
          '202': { description: 'The alert; its failed deliveries are pending again.', content: json(ref('Alert')) },
          '404': err('No such alert.'),
          ...auth('Manage Alerts'),
        },
      },
    },
    '/replay': {
      post: {
        tags: ['Alerts'],
        summary: 'Replay rules over stored records',
        description:
          'Evaluates the rules over the stored records whose event time is in [from, to), in stored order, with the served (or given) revision, and answers what a live run would give: counts, per rule, and — for a token with View Alerts too — the alerts (titles, dedup strings, contexts and summaries are alert content; a token with View Rules alone gets the counts only). Stores and delivers nothing. The answer is streamed (chunked) as it is built. Replays take fair places: config detection.replay.concurrency at once (default 2) and one per token; the next wait (detection.replay.queue, default 8, one per token) and a freed place goes round robin over tokens. A replay stops, and frees its place, when its caller goes away. Needs View Rules.',
        operationId: 'replay',
        requestBody: { required: true, content: json(ref('ReplayRequest')) },
        responses: {
          '200': {
            description: 'The counts, and the alerts for a token with View Alerts.',
            content: json(ref('ReplayResult')),
          },
          '400': err(
            'A bad time, from not before to, an unknown field, rule id or revision; [from, to) covers more stored bytes than one replay may read (config detection.replay.maxBytes); or the replay would hold more alert groups (detection.replay.maxGroups, default 20,000) or alert content (detection.replay.maxContentBytes, default 64 MiB) than allowed — the message names the limit: narrow the range or name fewer rules.',
          ),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          '503': {
            ...err(
              'Replay is busy: as many replays as config detection.replay.concurrency allows are running and as many as detection.replay.queue allows are waiting, or this token already has a replay waiting. Retry after the seconds Retry-After gives (estimated from the running replays’ progress).',
            ),
            headers: { 'Retry-After': { description: 'Seconds, 1 to 3600.', schema: { type: 'integer', minimum: 1 } } },
          },
          ...auth('View Rules'),
        },
      },
    },
  }
}
