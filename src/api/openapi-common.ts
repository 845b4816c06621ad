// The shared pieces of the OpenAPI document (openapi.ts assembles it): the helpers every part
// uses, the errors every route may answer (401/403, 501, 503) and the error shapes — `Error`, whose
// `code` is the stable code of errors.ts, with its validation problems and unit-test results.
import { ERROR_CODES } from '../errors.js'

export type Obj = Record<string, unknown>

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
export const json = (schema: Obj, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
})
export const err = (description: string, example?: unknown) => ({
  description,
  content: json(ref('Error'), example),
})
export const AUTH_ERRORS = {
  '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.', {
    message: 'missing X-API-Key header',
    code: 'Unauthorized',
  }),
  '403': err('The token is valid but lacks the permission the method needs.', {
    message: 'this token lacks the Manage Rules permission',
    code: 'Forbidden',
  }),
}
export const UNAVAILABLE = err(
  'It cannot be done right now (a mass deletion waits for a person, the Python test pool is busy or its sandbox cannot start); `Retry-After` says when to retry where that is known.',
)
export const NOT_IMPLEMENTED = err(
  'Not available in this build or on the configured backend (e.g. a kind without a test engine).',
)

/** The error shapes and the plain message. */
export const ERROR_SCHEMAS: Record<string, Obj> = {
  Error: {
    type: 'object',
    description: 'Every error answer. 5xx answers carry only `message`, `code` and `requestId` (the log has the rest).',
    required: ['message', 'code'],
    properties: {
      message: { type: 'string' },
      code: {
        type: 'string',
        enum: [...ERROR_CODES],
        description:
          'The stable code of the error (e.g. `ValidationFailed`, `NotFound`, `PreconditionFailed`, `Internal`): branch on it, not on `message`.',
      },
      errors: { type: 'array', items: ref('FieldProblem'), description: 'Every validation problem found.' },
      testResults: { type: 'array', items: ref('TestResult'), description: 'The unit tests run, when one failed.' },
      requestId: { type: 'string', description: 'On 5xx answers: the request id the logs carry.' },
      limit: { type: 'integer', description: 'On 413 answers of the log sources: the limit exceeded.' },
    },
  },
  FieldProblem: {
    type: 'object',
    required: ['path', 'message'],
    properties: {
      path: { type: 'string', description: 'JSON pointer into the request body.' },
      message: { type: 'string' },
      line: { type: 'integer', description: 'Inside a YAML-text field: the line (1-based).' },
      column: { type: 'integer', description: 'Inside a YAML-text field: the column (1-based).' },
    },
  },
  TestResult: {
    type: 'object',
    description: 'One unit test. A test that could not run is never a pass.',
    required: ['name', 'passed', 'error'],
    properties: {
      name: { type: 'string' },
      passed: { type: 'boolean' },
      error: { type: 'string', nullable: true, description: 'Why it did not pass.' },
      errored: { type: 'boolean', description: 'Scheduled and simple rules: whether any function raised.' },
      functions: {
        type: 'object',
        description:
          'Scheduled and simple rules: per function (`detection`, `title`, `dedup`, `alertContext`, `severity`, `description`, `reference`, `runbook`, `destinations`) its output and error.',
        additionalProperties: ref('FunctionOutcome'),
      },
    },
  },
  FunctionOutcome: {
    type: 'object',
    required: ['output', 'error'],
    properties: {
      output: { description: 'What the function returned (any JSON value; null when it raised).' },
      error: { type: 'string', nullable: true },
    },
  },
  Message: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
}
