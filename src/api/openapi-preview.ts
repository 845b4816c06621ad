// The OpenAPI part of the routes that run an unsaved rule (unsaved-rule.ts): POST /replay/preview
// (preview-route.ts) and POST /test-runs (test-run-route.ts), with their request and answer schemas.
import { KINDS } from '../rules/kinds/index.js'
import { AUTH_ERRORS, err, json, type Obj, ref } from './openapi-common.js'

const time = { type: 'string', format: 'date-time' }
const kind = {
  type: 'string',
  enum: [...new Set(KINDS.flatMap((k) => [k.apiPath, k.name]))],
  description: 'The rule’s kind: its API path (`GET /kinds` `path`) or its name.',
}
const rule = {
  type: 'object',
  description:
    'The rule as a create or replace sends it (the kind’s write body, `id` included); it is checked as a save checks it. Nothing is saved.',
}
const ruleProblems =
  'the rule is not valid (its problems as a save reports them, their pointers under `/rule`: `/rule/body`, with the line)'

export const PREVIEW_SCHEMAS: Obj = {
  PreviewRequest: {
    type: 'object',
    required: ['kind', 'rule', 'from', 'to'],
    additionalProperties: false,
    properties: {
      kind,
      rule,
      from: { ...time, description: 'Records whose event time is at or after this instant.' },
      to: { ...time, description: 'Records whose event time is before this instant.' },
    },
  },
  TestRunRequest: {
    type: 'object',
    required: ['kind', 'rule'],
    additionalProperties: false,
    properties: {
      kind,
      rule,
      tests: { type: 'array', items: { type: 'string' }, description: 'The names of the tests to run; absent: all.' },
    },
  },
  TestRunResult: {
    type: 'object',
    required: ['passed', 'testResults'],
    properties: {
      passed: { type: 'boolean', description: 'Every test run passed.' },
      testResults: {
        type: 'array',
        description:
          'One per test run, as a failed save lists them: `name`, `passed`, `error`; for Python-backed rules also `errored` and `functions` (each function’s `output` and `error`).',
        items: {
          type: 'object',
          required: ['name', 'passed'],
          properties: {
            name: { type: 'string' },
            passed: { type: 'boolean' },
            error: { type: 'string', nullable: true },
            errored: { type: 'boolean' },
            functions: {
              type: 'object',
              additionalProperties: {
                type: 'object',
                properties: { output: {}, error: { type: 'string', nullable: true } },
              },
            },
          },
        },
      },
    },
  },
}

export function previewPaths(): Obj {
  return {
    '/replay/preview': {
      post: {
        tags: ['Alerts'],
        summary: 'Preview an unsaved rule over stored records',
        description:
          'Runs one rule nobody saved (in place of the served rule of its id, with the served revision’s globals and data models) over the stored records whose event time is in [from, to), as `POST /replay` runs rules, and answers as it does — with, for each alert, `sampleEvents`: its first events (at most 5; they count against detection.replay.maxContentBytes). The kinds detection runs over stored records only. The replay’s fair places, caps and streaming apply; closing the connection stops the preview and frees its place. Needs View Rules and Manage Rules (it runs unsaved code, as a test run does); the alerts need View Alerts too.',
        operationId: 'previewRule',
        requestBody: { required: true, content: json(ref('PreviewRequest')) },
        responses: {
          '200': {
            description: 'The counts, and the alerts (with their first events) for a token with View Alerts.',
            content: json(ref('ReplayResult')),
          },
          '400': err(
            `A bad time, from not before to, an unknown field or kind, a kind detection does not run over stored records; ${ruleProblems}; or a replay cap reached (detection.replay.maxBytes, maxGroups, maxContentBytes) — the message names it.`,
          ),
          ...AUTH_ERRORS,
          '403': err('The token lacks the View Rules or the Manage Rules permission.'),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          '503': {
            ...err('Replay is busy (as `POST /replay`); retry after the seconds Retry-After gives.'),
            headers: { 'Retry-After': { description: 'Seconds, 1 to 3600.', schema: { type: 'integer', minimum: 1 } } },
          },
        },
      },
    },
    '/test-runs': {
      post: {
        tags: ['Operations'],
        summary: 'Run the unit tests of an unsaved rule',
        description:
          'Runs the unit tests of a rule nobody saved — all, or only those named in `tests` — and answers every result, pass or fail, with the functions’ outputs (a save’s `run-tests-only` answers 204 on a pass). Nothing is saved. Needs Manage Rules.',
        operationId: 'runRuleTests',
        requestBody: { required: true, content: json(ref('TestRunRequest')) },
        responses: {
          '200': { description: 'The results.', content: json(ref('TestRunResult')) },
          '400': err(
            `An unknown field or kind, a test name the rule does not have, no test to run; or ${ruleProblems}.`,
          ),
          ...AUTH_ERRORS,
          '403': err('The token lacks the Manage Rules permission.'),
          '413': err('The body is too large.'),
          '415': err('The body is not JSON.'),
          '501': err('The kind’s tests cannot run here (no engine for it).'),
          '503': err('The Python sandbox is busy or unavailable.'),
        },
      },
    },
  }
}
