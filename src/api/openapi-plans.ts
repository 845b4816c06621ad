// The OpenAPI part of POST /plans and GET /plans/{id} (plan-routes.ts): the Plan schema and the paths.
import { err, json, type Obj, ref } from './openapi-common.js'

const str = { type: 'string' }
const problem = {
  type: 'object',
  required: ['message'],
  properties: { message: str, line: { type: 'integer' }, column: { type: 'integer' } },
}
const rule = {
  type: 'object',
  required: ['id', 'kind', 'path'],
  properties: { id: str, kind: str, path: str },
}
const counts = {
  type: 'object',
  nullable: true,
  required: ['matches', 'alerts', 'errors'],
  properties: { matches: { type: 'integer' }, alerts: { type: 'integer' }, errors: { type: 'integer' } },
}
const samples = {
  type: 'array',
  description: 'Up to 3 alerts (title, dedup, severity, eventCount, first/last event time); empty without View Alerts.',
  items: { type: 'object', additionalProperties: true },
}
const paths = (description: string) => ({ type: 'array', items: str, description })

export const PLAN_SCHEMAS: Obj = {
  PlanRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['base', 'head'],
    properties: {
      base: {
        type: 'string',
        description: 'A commit id, or a branch name of the rules repository: the revision the change starts from.',
      },
      head: { type: 'string', description: 'A commit id, or a branch name: the revision the change leads to.' },
      backtestDays: {
        type: 'integer',
        minimum: 0,
        description:
          'Days of stored events before now the backtest replays (default `plans.backtestDays`, 1; at most `plans.maxBacktestDays`, 7).',
      },
    },
  },
  Plan: {
    type: 'object',
    required: [
      'id',
      'createdAt',
      'base',
      'mergeBase',
      'head',
      'status',
      'summary',
      'files',
      'rules',
      'tests',
      'brokenReferences',
      'backtest',
    ],
    properties: {
      id: str,
      createdAt: { type: 'string', format: 'date-time' },
      base: { type: 'string', description: 'The base commit id (as asked, resolved).' },
      mergeBase: {
        type: 'string',
        description:
          'The commit the head is compared with, as a pull request shows its change: the merge base of base and head (base itself when it is an ancestor of head, or when they share no history).',
      },
      head: { type: 'string', description: 'The head commit id.' },
      status: {
        type: 'string',
        enum: ['pass', 'fail'],
        description: 'fail: an invalid file, a failed test or a broken reference.',
      },
      summary: { type: 'string', description: 'One line, as a pull-request check shows it.' },
      files: {
        type: 'object',
        required: ['added', 'changed', 'removed', 'invalid'],
        properties: {
          added: paths('Files the head adds.'),
          changed: paths('Files the head changes.'),
          removed: paths('Files the head removes.'),
          invalid: {
            type: 'array',
            description: 'Files of the change that the head leaves invalid, with their problems.',
            items: {
              type: 'object',
              required: ['path', 'errors'],
              properties: { path: str, ruleId: str, errors: { type: 'array', items: problem } },
            },
          },
        },
      },
      rules: {
        type: 'object',
        required: ['added', 'changed', 'removed', 'affected'],
        properties: {
          added: { type: 'array', items: rule },
          changed: { type: 'array', items: rule },
          removed: { type: 'array', items: rule },
          affected: {
            type: 'array',
            description:
              'Rules whose file did not change but that depend on what did (a helper, a data model, a correlation member).',
            items: {
              ...rule,
              required: ['id', 'kind', 'path', 'because'],
              properties: { ...rule.properties, because: str },
            },
          },
        },
      },
      tests: {
        type: 'array',
        description: 'The unit tests of every changed, added and affected rule that has tests, at the head.',
        items: {
          type: 'object',
          required: ['ruleId', 'kind', 'passed', 'results'],
          properties: {
            ruleId: str,
            kind: str,
            passed: { type: 'boolean', nullable: true, description: 'null: the tests could not run here.' },
            results: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'passed'],
                properties: { name: str, passed: { type: 'boolean', nullable: true }, error: str },
              },
            },
          },
        },
      },
      brokenReferences: {
        type: 'array',
        description: 'Rules of the head naming a rule or query the head lacks (the base version did not).',
        items: { type: 'object', required: ['ruleId', 'message'], properties: { ruleId: str, message: str } },
      },
      backtest: {
        type: 'object',
        required: ['from', 'to', 'records', 'rules'],
        properties: {
          from: { type: 'string', format: 'date-time' },
          to: { type: 'string', format: 'date-time' },
          records: { type: 'integer' },
          skipped: { type: 'string', description: 'Why the backtest did not run (the rest of the plan stands).' },
          rules: {
            type: 'array',
            items: {
              type: 'object',
              required: ['ruleId', 'base', 'head', 'samples'],
              properties: {
                ruleId: str,
                base: { ...counts, description: 'As the base has the rule (null: new).' },
                head: { ...counts, description: 'As the head has it (null: removed).' },
                samples: {
                  type: 'object',
                  required: ['base', 'head'],
                  properties: { base: samples, head: samples },
                },
              },
            },
          },
        },
      },
    },
  },
}

export function planPaths(): Obj {
  return {
    '/plans': {
      post: {
        tags: ['Plans'],
        summary: 'Make a plan of a change',
        description:
          'What the change from `base` to `head` does: files and rules added, changed, removed and left invalid, the unit tests of every changed, added and affected rule, references broken, and a backtest of the changed rules over the last days of stored events (the alerts each version would raise). Stored; read again with GET /plans/{id}. Needs Manage Rules; the backtest samples need View Alerts too.',
        operationId: 'createPlan',
        requestBody: { required: true, content: json(ref('PlanRequest')) },
        responses: {
          '201': { description: 'The plan.', content: json(ref('Plan')) },
          '400': err('The body is not a plan request, or the repository has no such base or head.'),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the Manage Rules permission.'),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          '503': err('Too many plans are being made.'),
        },
      },
    },
    '/plans/{id}': {
      get: {
        tags: ['Plans'],
        summary: 'Read a plan',
        description: 'A plan made by POST /plans. Needs View Rules; the backtest samples need View Alerts too.',
        operationId: 'getPlan',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The plan.', content: json(ref('Plan')) },
          '400': err('A query parameter.'),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the View Rules permission.'),
          '404': err('No plan has this id (plans are kept while they are among the newest 500).'),
        },
      },
    },
  }
}
