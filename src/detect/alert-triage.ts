// An alert's triage state (alerts.md §3): its assignee, the analysts' comments and the history of the
// changes made through the API (status, assignee, comments), kept on the group and stored with it
// (each change is a journal line of the group, replayed at start like the status). Pure: the alert
// book applies a change at its commit; the routes check the input against the limits here.
import type { AlertStatus } from './alert-status.js'

/** Longest assignee, in characters. */
export const MAX_ASSIGNEE = 200
/** Longest comment, in characters. */
export const MAX_COMMENT = 4000
/** Comments kept per alert (the newest); history entries kept per alert (the newest). */
export const MAX_COMMENTS = 200
export const MAX_HISTORY = 200

/** Who made a change: the API token (as a rule write's actor). */
export interface TriageActor {
  id: string
  type: 'api-token'
  name: string
}

export interface AlertComment {
  id: string
  text: string
  author: TriageActor
  createdAt: string
}

/** One change: who, when, which field, and its value before and after (a comment: its id after). */
export interface AlertChange {
  at: string
  actor: TriageActor
  field: 'status' | 'assignee' | 'comment'
  from: string | null
  to: string | null
}

/** The triage fields of a group (optional: groups stored before them have none). */
export interface Triage {
  status: AlertStatus
  updatedAt: string
  assignee?: string | null
  comments?: AlertComment[]
  history?: AlertChange[]
}

/** A change asked for: any of status, assignee (null: nobody) and a new comment (its id chosen by the caller), by `actor`. */
export interface TriageChange {
  actor: TriageActor
  status?: AlertStatus
  assignee?: string | null
  comment?: { id: string; text: string }
}

const newest = <T>(list: readonly T[], max: number): T[] => (list.length > max ? list.slice(-max) : [...list])

/**
 * Applies `c` to `g` at `now`. Arrays are replaced, never changed in place (the undo log's shallow
 * copy of the group keeps the old ones). A field set to the value it has is no change (no history).
 */
export function applyTriage(g: Triage, c: TriageChange, now: string): void {
  const changes: AlertChange[] = []
  const note = (field: AlertChange['field'], from: string | null, to: string | null) =>
    changes.push({ at: now, actor: c.actor, field, from, to })
  if (c.status !== undefined && c.status !== g.status) {
    note('status', g.status, c.status)
    g.status = c.status
  }
  if (c.assignee !== undefined && c.assignee !== (g.assignee ?? null)) {
    note('assignee', g.assignee ?? null, c.assignee)
    g.assignee = c.assignee
  }
  if (c.comment !== undefined) {
    const comment: AlertComment = { id: c.comment.id, text: c.comment.text, author: c.actor, createdAt: now }
    g.comments = newest([...(g.comments ?? []), comment], MAX_COMMENTS)
    note('comment', null, comment.id)
  }
  if (changes.length > 0) g.history = newest([...(g.history ?? []), ...changes], MAX_HISTORY)
  g.updatedAt = now
}

/** The triage part of an alert's API view (GET /alerts/{id}). */
export function triageView(g: Omit<Triage, 'status' | 'updatedAt'>): {
  assignee: string | null
  comments: AlertComment[]
  history: AlertChange[]
} {
  return { assignee: g.assignee ?? null, comments: g.comments ?? [], history: g.history ?? [] }
}
