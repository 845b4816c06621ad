// The SQL of one alerts page over PostgreSQL (pg-alerts.ts), built from only the filters given, so
// the planner sees concrete predicates: like the in-memory index (detect/alert-index.ts), a page
// filtered by rule or severity (or status alone) reads one ordered list per (value, status) asked,
// each an index range of alert_groups (newest first, migrations 2 and 6) cut at the cursor, and
// merges them; contexts and deliveries are joined to the page's rows only, in the same statement.
import type { AlertQuery } from '../detect/alert-index.js'

/**
 * More lists than this: a list per rule (or severity), statuses checked per row; more rules (or
 * severities) than this: one scan with `= ANY` filters, its plan the planner's.
 */
export const MAX_LISTS = 32

/** A list's equality: its column and value. */
type Eq = [column: string, value: string]

/** A value compared with a text column: a NUL (which no stored value holds) cannot be sent. */
const clean = (s: string) => s.replaceAll('\u0000', ' ')
const values = (v: readonly string[] | undefined) => (v?.length ? [...new Set(v.map(clean))] : null)

/**
 * An alert's deliveries as the outbox has them, as JSON text (null: none), for the alert id `id`
 * (an SQL expression). deliveries.alert_id has the database's default collation: compared in it,
 * its key is used.
 */
export const deliveriesOf = (id: string) =>
  `(SELECT json_agg(json_build_object('id', o.destination_id, 'state', o.state, 'attempts', o.attempts,
     'lastError', o.last_error) ORDER BY o.destination_id)::text
     FROM deliveries o WHERE o.alert_id = ${id} COLLATE "default")`

/**
 * The page's statement: rows (state, context, deliveries as JSON text or null) newest createdAt
 * first, ties by id, `q.limit + 1` at most (one more than the page says another follows).
 */
export function pageSql(q: AlertQuery): { text: string; values: unknown[] } {
  const params: unknown[] = []
  const p = (v: unknown) => `$${params.push(v)}`
  const match = (column: string, vs: readonly string[]) =>
    vs.length === 1 ? `${column} = ${p(vs[0])}` : `${column} = ANY(${p(vs)}::text[])`

  const rules = values(q.ruleIds)
  const severities = values(q.severities)
  const statuses = values(q.statuses)
  // The rows every list keeps: alerts within the time bounds, older than the cursor (its
  // `created_at <=` bound is the index range; the rest drops the cursor's own instant's ids before it).
  const common = ['alert']
  if (q.createdAfter !== undefined) common.push(`created_at >= ${p(q.createdAfter)}`)
  if (q.createdBefore !== undefined) common.push(`created_at < ${p(q.createdBefore)}`)
  if (q.after) {
    const at = p(q.after.createdAt)
    common.push(`created_at <= ${at}`, `(created_at < ${at} OR id > ${p(clean(q.after.id))})`)
  }
  const limit = p(q.limit + 1)

  // The lists: by rule (else severity) and status, as the in-memory index's; the other filter checked per row.
  const lead = rules ? { column: 'rule_id', vs: rules } : severities ? { column: 'severity', vs: severities } : null
  // Too many (value, status) pairs: a list per value, its statuses checked per row.
  const pairs = !lead || !statuses || lead.vs.length * statuses.length <= MAX_LISTS
  const lists: Eq[][] = []
  const byStatus = (eq: Eq[]) => (statuses && pairs ? statuses.map((s): Eq[] => [...eq, ['status', s]]) : [eq])
  if (lead) for (const v of lead.vs) lists.push(...byStatus([[lead.column, v]]))
  else if (statuses) lists.push(...byStatus([]))

  const select = (where: string[]) =>
    `SELECT id, created_at, state FROM alert_groups WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id LIMIT ${limit}`
  let page: string
  if (lists.length === 0) page = select(common)
  else if (lists.length > MAX_LISTS) {
    const all = [...common]
    if (rules) all.push(match('rule_id', rules))
    if (severities) all.push(match('severity', severities))
    if (statuses) all.push(match('status', statuses))
    page = select(all)
  } else {
    // Every parameter sent is used (an unused one has no type the server can infer).
    const rest = [...common]
    if (rules && severities) rest.push(match('severity', severities))
    if (statuses && !pairs) rest.push(match('status', statuses))
    const one = (list: Eq[]) => select([...list.map(([column, v]) => `${column} = ${p(v)}`), ...rest])
    page =
      lists.length === 1
        ? one(lists[0]!)
        : `SELECT * FROM (${lists.map((l) => `(${one(l)})`).join(' UNION ALL ')}) u
             ORDER BY created_at DESC, id LIMIT ${limit}`
  }
  const text = `SELECT p.state, c.context, ${deliveriesOf('p.id')} AS deliveries FROM (${page}) p
      LEFT JOIN alert_contexts c ON c.group_id = p.id
    ORDER BY p.created_at DESC, p.id`
  return { text, values: params }
}
