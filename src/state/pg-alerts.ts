// The alerts as the API reads and changes them over the PostgreSQL store (detect/alert-access.ts):
// pages and single alerts read from alert_groups with their context and deliveries, one statement
// each (alert-page-sql.ts builds a page's); triage changes (status, assignee, comments, history) as
// one transaction that locks the rows it changes. Every replica reads the same alerts: a status set
// through one is read through another.
import type pg from 'pg'
import type { AlertAccess, AlertPage, RuleActivity } from '../detect/alert-access.js'
import type { AlertQuery } from '../detect/alert-index.js'
import { applyTriage, type TriageActor, type TriageChange } from '../detect/alert-triage.js'
import type { AlertStatus, ContextRef, Group } from '../detect/grouping.js'
import type { Location } from '../detect/stored-log.js'
import { deliveriesOf, pageSql } from './alert-page-sql.js'
import { parseState } from './pg-groups.js'
import { inRetriedTransaction } from './transaction.js'

/** What the alerts need of the ledger: contexts and event locations of committed groups. */
export interface AlertLedger {
  readContext(ref: ContextRef): Promise<Record<string, unknown>>
  alertEvents(g: Group): Promise<Location[]>
}

type Change = Omit<TriageChange, 'actor'> & { actor?: TriageActor }

type Delivery = Group['destinations'][number]
type Row = { state: string; context: string | null; deliveries: string | null }

/** A row of pageSql's shape (alert-page-sql.ts): the state, its context, its deliveries as the outbox has them. */
function groupOf(r: Row): Group {
  const g = parseState(r.state)
  if (r.context !== null) {
    const c = JSON.parse(r.context) as unknown
    g.alertContext = typeof c === 'object' && c !== null ? (c as Record<string, unknown>) : {}
  }
  return r.deliveries === null ? g : withDeliveries(g, JSON.parse(r.deliveries) as Delivery[])
}

/**
 * The group with its deliveries as the outbox last recorded them (state/pg-outbox.ts): a group's
 * own state holds them as they were at its creation, and the outbox is every replica's.
 */
function withDeliveries(g: Group, recorded: readonly Delivery[]): Group {
  const seen = new Map(g.destinations.map((d) => [d.id, d]))
  for (const d of recorded) {
    if (seen.has(d.id)) Object.assign(seen.get(d.id)!, d)
    else g.destinations.push(d)
  }
  return g
}

export class PgAlerts implements AlertAccess {
  constructor(
    private readonly db: pg.Pool,
    private readonly ledger: AlertLedger,
  ) {}

  /** Newest createdAt first, ties by id (as the in-memory index: alert-index.ts); `next` when more follow. */
  async query(q: AlertQuery): Promise<AlertPage> {
    const { text, values } = pageSql(q)
    const { rows } = await this.db.query<Row>(text, values)
    const results = rows.slice(0, q.limit).map(groupOf)
    const last = results[results.length - 1]
    const next = rows.length > q.limit && last ? { createdAt: last.createdAt as string, id: last.id } : null
    return { results, next }
  }

  async ruleActivities(ruleIds: readonly string[], since: string): Promise<Map<string, RuleActivity>> {
    const out = new Map<string, RuleActivity>()
    const ids = ruleIds.filter((id) => !id.includes('\u0000'))
    if (ids.length === 0) return out
    const { rows } = await this.db.query<{ rule_id: string; last: string; since: string }>(
      `SELECT rule_id, max(created_at) AS last, count(*) FILTER (WHERE created_at >= $2) AS since
         FROM alert_groups WHERE alert AND rule_id = ANY($1) GROUP BY rule_id`,
      [ids, since],
    )
    for (const r of rows) out.set(r.rule_id, { lastCreatedAt: r.last, createdSince: Number(r.since) })
    return out
  }

  async alert(id: string): Promise<Group | undefined> {
    if (id.includes('\u0000')) return undefined
    const { rows } = await this.db.query<Row>(
      `SELECT g.state, c.context, ${deliveriesOf('g.id')} AS deliveries
         FROM alert_groups g LEFT JOIN alert_contexts c ON c.group_id = g.id WHERE g.id = $1 AND g.alert`,
      [id],
    )
    return rows[0] ? groupOf(rows[0]) : undefined
  }

  eventLocations(g: Group): Promise<Location[]> {
    return this.ledger.alertEvents(g)
  }

  async context(g: Group): Promise<Record<string, unknown>> {
    if (g.alertContext !== null) return g.alertContext
    return g.contextAt ? this.ledger.readContext(g.contextAt) : {}
  }

  setStatus(id: string, status: AlertStatus): Promise<Group | undefined> {
    return this.apply([id], { status }).then(([g]) => g)
  }

  change(ids: readonly string[], change: TriageChange): Promise<Array<Group | undefined>> {
    return this.apply(ids, change)
  }

  /**
   * One transaction: the alerts' rows locked (in id order), changed, written back; undefined: no such
   * alert. Run again when it lost a deadlock (a detection commit locks ordinary groups before
   * correlation ones, each in id order: a triage of both kinds can cross it).
   */
  private apply(ids: readonly string[], change: Change): Promise<Array<Group | undefined>> {
    const wanted = ids.filter((id) => !id.includes('\u0000'))
    if (wanted.length === 0) return Promise.resolve(ids.map(() => undefined))
    return inRetriedTransaction(this.db, async (client) => {
      const { rows } = await client.query<{ state: string }>(
        'SELECT state FROM alert_groups WHERE id = ANY($1) AND alert ORDER BY id FOR UPDATE',
        [wanted],
      )
      const now = new Date().toISOString()
      const byId = new Map<string, Group>()
      for (const r of rows) {
        const g = parseState(r.state)
        const { actor, ...rest } = change
        if (actor) applyTriage(g, { ...rest, actor }, now)
        else {
          // A change without an actor (the book's own callers): the status alone, no history.
          if (rest.status !== undefined) g.status = rest.status
          g.updatedAt = now
        }
        byId.set(g.id, g)
      }
      const changed = [...byId.values()]
      if (changed.length > 0)
        await client.query(
          `UPDATE alert_groups SET state = u.s, status = u.st, updated_at = now()
           FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, s, st) WHERE alert_groups.id = u.id`,
          [
            changed.map((g) => g.id),
            changed.map((g) => JSON.stringify({ ...g, alertContext: undefined })),
            changed.map((g) => g.status),
          ],
        )
      return ids.map((id) => byId.get(id))
    })
  }
}
