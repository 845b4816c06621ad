// The OpenAPI part of alert triage (alerts.md §3, "Triage"): the AlertDetail shape (assignee,
// comments, history), the PATCH /alerts/{id} body, and the paths of POST /alerts/{id}/comments and
// POST /alerts/status. Spread into openapi-alerts.ts's schemas and paths.
import { STATUSES } from '../detect/alert-status.js'
import { MAX_ASSIGNEE, MAX_COMMENT, MAX_COMMENTS, MAX_HISTORY } from '../detect/alert-triage.js'
import { MAX_BULK_IDS } from './alert-triage-body.js'
import { err, json, type Obj, ref } from './openapi-common.js'

const auth = (permission: string) => ({
  '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
  '403': err(`The token lacks the ${permission} permission.`),
})
const time = { type: 'string', format: 'date-time' }
const ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The alert id.' }

export const TRIAGE_SCHEMAS: Obj = {
  AlertDetail: {
    description: 'An alert as `GET /alerts/{id}` shows it: the Alert, its assignee, comments and history.',
    allOf: [
      ref('Alert'),
      {
        type: 'object',
        required: ['assignee', 'comments', 'history'],
        properties: {
          comments: {
            type: 'array',
            maxItems: MAX_COMMENTS,
            description: `Oldest first; the newest ${MAX_COMMENTS} are kept.`,
            items: ref('AlertComment'),
          },
          history: {
            type: 'array',
            maxItems: MAX_HISTORY,
            description: `Each change made through the API (status, assignee, a comment), oldest first; the newest ${MAX_HISTORY} are kept.`,
            items: {
              type: 'object',
              required: ['at', 'actor', 'field', 'from', 'to'],
              properties: {
                at: time,
                actor: ref('AlertActor'),
                field: { type: 'string', enum: ['status', 'assignee', 'comment'] },
                from: {
                  type: 'string',
                  nullable: true,
                  description: 'The value before (null: none; a comment: null).',
                },
                to: { type: 'string', nullable: true, description: 'The value after (a comment: its id).' },
              },
            },
          },
        },
      },
    ],
  },
  AlertActor: {
    type: 'object',
    required: ['id', 'type', 'name'],
    description: 'The API token that made the change.',
    properties: { id: { type: 'string' }, type: { type: 'string', enum: ['api-token'] }, name: { type: 'string' } },
  },
  AlertComment: {
    type: 'object',
    required: ['id', 'text', 'author', 'createdAt'],
    properties: {
      id: { type: 'string' },
      text: { type: 'string' },
      author: ref('AlertActor'),
      createdAt: time,
    },
  },
  AlertCommentRequest: {
    type: 'object',
    required: ['text'],
    additionalProperties: false,
    properties: {
      text: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_COMMENT,
        description: `1–${MAX_COMMENT.toLocaleString('en')} characters, not blank; tabs and line breaks allowed, no other control character.`,
      },
    },
  },
  AlertStatusRequest: {
    type: 'object',
    required: ['ids', 'status'],
    additionalProperties: false,
    properties: {
      ids: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_BULK_IDS,
        items: { type: 'string', minLength: 1 },
        description: 'Alert ids; an id given twice counts once.',
      },
      status: { type: 'string', enum: [...STATUSES] },
    },
  },
  AlertStatusResult: {
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        description: 'One entry per distinct id, in the order given.',
        items: {
          type: 'object',
          required: ['id', 'outcome'],
          properties: { id: { type: 'string' }, outcome: { type: 'string', enum: ['updated', 'not-found'] } },
        },
      },
    },
  },
  AlertPatch: {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: [...STATUSES] },
      assignee: {
        type: 'string',
        nullable: true,
        minLength: 1,
        maxLength: MAX_ASSIGNEE,
        description: `1–${MAX_ASSIGNEE} characters on one line, not blank; null clears it.`,
      },
    },
  },
}

export function triagePaths(): Obj {
  return {
    '/alerts/{id}/comments': {
      post: {
        tags: ['Alerts'],
        summary: 'Comment on an alert',
        description:
          'Adds a comment by the token, stored with the alert (and a `history` entry). The alert keeps its newest 200 comments. Needs Manage Alerts.',
        operationId: 'addAlertComment',
        parameters: [ID],
        requestBody: { required: true, content: json(ref('AlertCommentRequest')) },
        responses: {
          '201': { description: 'The comment.', content: json(ref('AlertComment')) },
          '400': err('No text, a blank or too long text, a control character, or another field; nothing stored.'),
          '404': err('No such alert.'),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          ...auth('Manage Alerts'),
        },
      },
    },
    '/alerts/status': {
      post: {
        tags: ['Alerts'],
        summary: 'Change the status of several alerts',
        description: `Sets one status on up to ${MAX_BULK_IDS} alerts in one commit; each changed alert gets a \`history\` entry. Ids that name no alert are reported, not an error. Needs Manage Alerts.`,
        operationId: 'setAlertsStatus',
        requestBody: { required: true, content: json(ref('AlertStatusRequest')) },
        responses: {
          '200': { description: 'Per id: updated or not-found.', content: json(ref('AlertStatusResult')) },
          '400': err(
            'No ids, more than 500, an id that is not a string, an unknown status or another field; nothing changed.',
          ),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          ...auth('Manage Alerts'),
        },
      },
    },
  }
}
