// The one error module. Every failure the service can explain to a caller is a RulekeeperError with
// a stable `code` and an HTTP `status`; only the error funnel (api/error-funnel.ts) turns them into
// responses, whose bodies carry the `code` beside the `message`. Anything else that is thrown is an
// internal error (`Internal`): logged, never shown.

export interface FieldProblem {
  /** JSON pointer into the request body (API) or the file path (CLI/status). */
  path: string
  message: string
  /** 1-based line and column inside a YAML-text field or file, when the problem has a location. */
  line?: number
  column?: number
}

export type ErrorCode =
  | 'BadRequest'
  | 'ValidationFailed'
  | 'TestsFailed'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'PayloadTooLarge'
  | 'UnsupportedMediaType'
  | 'PreconditionFailed'
  | 'MethodNotAllowed'
  | 'NotImplemented'
  | 'Unavailable'
  | 'RefConflict'
  | 'QuotaExceeded'
  | 'DataDirLocked'
  | 'ConfigInvalid'
  | 'Internal'

const STATUS: Record<ErrorCode, number> = {
  BadRequest: 400,
  ValidationFailed: 400,
  TestsFailed: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  NotImplemented: 501,
  Unavailable: 503,
  RefConflict: 409,
  /** A write would take the repository past rules.maxRepositoryBytes or rules.maxRules. */
  QuotaExceeded: 409,
  DataDirLocked: 500,
  ConfigInvalid: 500,
  Internal: 500,
}

/** Every stable code, as the OpenAPI document lists them. */
export const ERROR_CODES = Object.keys(STATUS) as readonly ErrorCode[]

/** The codes that mean nothing more than their status. */
const GENERIC: readonly ErrorCode[] = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'Conflict',
  'PreconditionFailed',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'NotImplemented',
  'Unavailable',
]

/**
 * The code of an answer that is no RulekeeperError (the router's 404/405/501, a Koa or http
 * error): the generic code of that status, else `BadRequest` for another 4xx and `Internal` for
 * anything else.
 */
export function codeOfStatus(status: number): ErrorCode {
  const code = GENERIC.find((c) => STATUS[c] === status)
  return code ?? (status >= 400 && status < 500 ? 'BadRequest' : 'Internal')
}

export class RulekeeperError extends Error {
  readonly code: ErrorCode
  readonly status: number
  /** Extra members of the JSON error body (`errors`, `testResults`, …). */
  readonly body: Record<string, unknown>
  /** Response headers that go with the answer (`Retry-After` on a busy 503). */
  readonly headers: Record<string, string>

  constructor(
    code: ErrorCode,
    message: string,
    body: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'RulekeeperError'
    this.code = code
    this.status = STATUS[code]
    this.body = body
    this.headers = headers
  }
}

export const badRequest = (message: string) => new RulekeeperError('BadRequest', message)
export const notFound = (message: string) => new RulekeeperError('NotFound', message)
export const conflict = (message: string) => new RulekeeperError('Conflict', message)
export const preconditionFailed = (message: string) => new RulekeeperError('PreconditionFailed', message)
export const notImplemented = (message: string) => new RulekeeperError('NotImplemented', message)
export const unavailable = (message: string) => new RulekeeperError('Unavailable', message)
/** A manual run asked of a replica that does not hold the schedules lease (shared slots, PostgreSQL). */
export const notLeading = () =>
  conflict(
    'this replica does not hold the schedules lease: runs happen on the replica that does (ask again; another replica may answer)',
  )

export function validationFailed(errors: FieldProblem[], message = 'the request body is invalid'): RulekeeperError {
  return new RulekeeperError('ValidationFailed', message, { errors })
}

export function isRulekeeperError(err: unknown): err is RulekeeperError {
  return err instanceof RulekeeperError
}
