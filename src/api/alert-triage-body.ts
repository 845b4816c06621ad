// The bodies of the alert triage writes (alerts.md §3): PATCH /alerts/{id} (status, assignee),
// POST /alerts/{id}/comments (text) and POST /alerts/status (ids, status), checked field by field
// into a problem list (the error funnel turns it into a 400 naming each field); nothing is changed
// unless the whole body is valid.
import { STATUSES, type AlertStatus } from '../detect/alert-status.js'
import { MAX_ASSIGNEE, MAX_COMMENT } from '../detect/alert-triage.js'
import { badRequest, type FieldProblem, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'

/** Ids one bulk status change may name. */
export const MAX_BULK_IDS = 500

const chars = (s: string) => [...s].length
/** Whether `s` holds a control character (C0 or DEL) other than those `allowed`. */
function hasControl(s: string, allowed = ''): boolean {
  for (const c of s) if ((c < ' ' || c === '\x7f') && !allowed.includes(c)) return true
  return false
}

function objectBody(body: unknown, shape: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw badRequest(`the body must be a JSON object: ${shape}`)
  return body
}

function unknownFields(body: Record<string, unknown>, known: readonly string[], problems: FieldProblem[]): void {
  for (const k of Object.keys(body))
    if (!known.includes(k))
      problems.push({
        path: `/${k}`,
        message: `${k} is not writable; only ${known.join(' and ')} ${known.length === 1 ? 'is' : 'are'}`,
      })
}

function statusOf(v: unknown, problems: FieldProblem[]): AlertStatus | undefined {
  if ((STATUSES as readonly unknown[]).includes(v)) return v as AlertStatus
  problems.push({ path: '/status', message: `status must be one of ${STATUSES.join(', ')}` })
  return undefined
}

/** PATCH /alerts/{id}: `status` and/or `assignee` (a string of 1–200 characters on one line, or null). */
export function patchBody(raw: unknown): { status?: AlertStatus; assignee?: string | null } {
  const body = objectBody(raw, '{ "status": …, "assignee": … }')
  const problems: FieldProblem[] = []
  unknownFields(body, ['status', 'assignee'], problems)
  const out: { status?: AlertStatus; assignee?: string | null } = {}
  if (!Object.hasOwn(body, 'status') && !Object.hasOwn(body, 'assignee'))
    problems.push({ path: '', message: 'give status or assignee (or both)' })
  if (Object.hasOwn(body, 'status')) out.status = statusOf(body.status, problems)
  if (Object.hasOwn(body, 'assignee')) {
    const a = body.assignee
    if (a === null) out.assignee = null
    else if (typeof a !== 'string')
      problems.push({ path: '/assignee', message: 'assignee must be a string, or null to clear it' })
    else if (a.trim() === '')
      problems.push({ path: '/assignee', message: 'assignee must not be empty (null clears it)' })
    else if (chars(a) > MAX_ASSIGNEE)
      problems.push({
        path: '/assignee',
        message: `assignee is longer than ${MAX_ASSIGNEE.toLocaleString('en')} characters`,
      })
    else if (hasControl(a))
      problems.push({ path: '/assignee', message: 'assignee must be one line without control characters' })
    else out.assignee = a
  }
  if (problems.length) throw validationFailed(problems)
  return out
}

/** POST /alerts/{id}/comments: `text`, 1–4,000 characters, not blank. */
export function commentBody(raw: unknown): string {
  const body = objectBody(raw, '{ "text": … }')
  const problems: FieldProblem[] = []
  unknownFields(body, ['text'], problems)
  const text = body.text
  if (!Object.hasOwn(body, 'text')) problems.push({ path: '/text', message: 'text is required' })
  else if (typeof text !== 'string') problems.push({ path: '/text', message: 'text must be a string' })
  else if (text.trim() === '') problems.push({ path: '/text', message: 'text must not be empty' })
  else if (chars(text) > MAX_COMMENT)
    problems.push({ path: '/text', message: `text is longer than ${MAX_COMMENT.toLocaleString('en')} characters` })
  else if (hasControl(text, '\t\n\r'))
    problems.push({ path: '/text', message: 'text must not hold control characters (tabs and line breaks are fine)' })
  if (problems.length) throw validationFailed(problems)
  return text as string
}

/** POST /alerts/status: `ids` (1–500 alert ids, each once) and `status`. */
export function bulkStatusBody(raw: unknown): { ids: string[]; status: AlertStatus } {
  const body = objectBody(raw, '{ "ids": [...], "status": … }')
  const problems: FieldProblem[] = []
  unknownFields(body, ['ids', 'status'], problems)
  const ids = body.ids
  if (!Array.isArray(ids) || ids.length === 0)
    problems.push({ path: '/ids', message: 'ids must be a non-empty array of alert ids' })
  else if (ids.length > MAX_BULK_IDS)
    problems.push({ path: '/ids', message: `ids holds ${ids.length} ids; at most ${MAX_BULK_IDS} at once` })
  else
    for (const [i, id] of ids.entries())
      if (typeof id !== 'string' || id === '')
        problems.push({ path: `/ids/${i}`, message: 'an alert id must be a non-empty string' })
  let status: AlertStatus | undefined
  if (Object.hasOwn(body, 'status')) status = statusOf(body.status, problems)
  else problems.push({ path: '/status', message: 'status is required' })
  if (problems.length) throw validationFailed(problems)
  return { ids: [...new Set(ids as string[])], status: status! }
}
