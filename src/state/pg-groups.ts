// Alert groups decided by the PostgreSQL store inside the commit transaction, so replicas never
// split a group: the commit locks each (rule, dedup string) it touches (pg_advisory_xact_lock, in
// one global order), reads that key's windows that can cover its matches (FOR UPDATE), places and
// counts the matches with grouping.ts's own code, and upserts the groups. The group turns into an
// alert in exactly one commit: the one whose matches crossed the threshold, whichever replica's.
import { createHash } from 'node:crypto'
import type pg from 'pg'
import type { GroupDelta } from '../detect/detection-ledger.js'
import { type Group, Grouper } from '../detect/grouping.js'

/** A group's context is found by its group id: `contextAt.file` is this prefix and the id. */
export const CONTEXTS = 'alert_contexts/'

/** The key of a rule and dedup string (a dedup string may hold a NUL, which a text column cannot). */
export const groupKey = (ruleId: string, dedup: string) =>
  createHash('sha256').update(`${ruleId}\u0000${dedup}`).digest('hex').slice(0, 32)

/** The advisory lock of a group key: its first 64 bits, signed. */
const lockOf = (key: string) => BigInt.asIntN(64, BigInt(`0x${key.slice(0, 16)}`))

/** A batch as one text parameter the server splits (no raw newline in any item: see pg-ledger.ts). */
export const SPLIT = (n: number) => `string_to_array($${n}, E'\\n')`
/** A value for a listed column: no NUL (text cannot hold one), no newline (the batch's separator). */
const column = (v: string) => v.replaceAll('\u0000', ' ').replaceAll('\n', ' ').replaceAll('\r', ' ')

/** A group's whole state as stored: without its context (kept once, in alert_contexts). */
export const stateText = (g: Group) => JSON.stringify({ ...g, alertContext: undefined })
export const parseState = (text: string): Group => ({ ...(JSON.parse(text) as Group), alertContext: null })

/** Upserts whole group states with their listed columns; `alertedBy` names who made new alerts. */
export async function writeGroups(
  client: pg.PoolClient,
  replica: string,
  groups: ReadonlyArray<{ g: Group; state: string }>,
  alertedBy: ReadonlySet<string>,
): Promise<void> {
  if (groups.length === 0) return
  const cols: string[][] = [[], [], [], [], [], [], [], [], [], []]
  for (const { g, state } of groups) {
    const row = [
      g.id,
      state,
      groupKey(g.ruleId, g.dedup),
      column(g.ruleId),
      column(g.severity),
      g.status,
      String(Date.parse(g.windowStart)),
      String(g.eventCount),
      g.alert ? 't' : 'f',
      g.createdAt ?? '',
    ]
    for (const [i, v] of row.entries()) cols[i]!.push(v)
  }
  const ids = groups.filter(({ g }) => alertedBy.has(g.id)).map(({ g }) => g.id)
  await client.query(
    `INSERT INTO alert_groups (id, replica, state, group_key, rule_id, severity, status, window_start_ms,
       event_count, alert, created_at, alerted_by)
     SELECT id, $1, s, k, r, sev, st, w::bigint, n::bigint, a::boolean, NULLIF(c, ''),
       CASE WHEN id = ANY(${SPLIT(12)}) THEN $1 END
     FROM unnest(${SPLIT(2)}, ${SPLIT(3)}, ${SPLIT(4)}, ${SPLIT(5)}, ${SPLIT(6)}, ${SPLIT(7)}, ${SPLIT(8)},
       ${SPLIT(9)}, ${SPLIT(10)}, ${SPLIT(11)}) AS u(id, s, k, r, sev, st, w, n, a, c)
     ON CONFLICT (id) DO UPDATE SET state = excluded.state, replica = excluded.replica,
       group_key = excluded.group_key, rule_id = excluded.rule_id, severity = excluded.severity,
       status = excluded.status, window_start_ms = excluded.window_start_ms, event_count = excluded.event_count,
       alert = excluded.alert, created_at = excluded.created_at,
       alerted_by = COALESCE(alert_groups.alerted_by, excluded.alerted_by), updated_at = now()`,
    [replica, ...cols.map((c) => c.join('\n')), ids.join('\n')],
  )
}

/**
 * Places every delta (in staged order) in its group under the key's lock; answers each delta's
 * group id, the groups changed (to write), the new contexts, and the ids that became alerts here.
 * `wholeIds` are the rows the same commit writes whole (pg-ledger.ts `writeWhole`): they are locked
 * in the same statement, so every row lock of a commit is taken in one id order, the order a triage
 * takes them in (pg-alerts.ts): no cycle between the two. Their states are answered as `whole`.
 */
export async function decideGroups(
  client: pg.PoolClient,
  deltas: readonly GroupDelta[],
  wholeIds: readonly string[] = [],
): Promise<{
  ids: string[]
  changed: Group[]
  contexts: Map<string, string>
  became: Set<string>
  whole: string[]
}> {
  const keys = new Map<string, bigint>()
  let from = Number.POSITIVE_INFINITY
  let to = Number.NEGATIVE_INFINITY
  for (const d of deltas) {
    const k = groupKey(d.rule.id, d.match.dedup)
    if (!keys.has(k)) keys.set(k, lockOf(k))
    from = Math.min(from, d.eventMs - d.rule.dedupPeriodMinutes * 60_000)
    to = Math.max(to, d.eventMs)
  }
  // One global order (the lock number, then the key): two commits never wait on each other in a cycle.
  const order = [...keys].sort(([ka, a], [kb, b]) => (a < b ? -1 : a > b ? 1 : ka < kb ? -1 : 1))
  await client.query(`SELECT pg_advisory_xact_lock(l::bigint) FROM unnest(${SPLIT(1)}) AS l`, [
    order.map(([, l]) => String(l)).join('\n'),
  ])
  // Only the windows that can cover a match: a start after (event - period), at or before the event.
  // The whole-written rows are other rules' (correlation, scheduled): never one of these windows.
  const { rows } = await client.query<{ id: string; state: string }>(
    `SELECT id, state FROM alert_groups WHERE (group_key = ANY(${SPLIT(1)}) AND window_start_ms > $2
       AND window_start_ms <= $3) OR id = ANY(${SPLIT(4)}) ORDER BY id FOR UPDATE`,
    [order.map(([k]) => k).join('\n'), from, to, wholeIds.join('\n')],
  )
  const wholeSet = new Set(wholeIds)
  const grouper = new Grouper(rows.filter((r) => !wholeSet.has(r.id)).map((r) => parseState(r.state)))
  const whole = rows.filter((r) => wholeSet.has(r.id)).map((r) => r.state)
  const before = new Set<string>()
  for (const g of grouper.groups.values()) if (g.alert) before.add(g.id)
  const ids: string[] = []
  const changed = new Map<string, Group>()
  const contexts = new Map<string, string>()
  const became = new Set<string>()
  for (const d of deltas) {
    const { group, created } = grouper.add(d.rule, d.match, d.eventMs, d.event, d.now)
    ids.push(group.id)
    changed.set(group.id, group)
    if (group.alertContext !== null && !contexts.has(group.id)) {
      contexts.set(group.id, JSON.stringify(group.alertContext))
      group.contextAt = { file: `${CONTEXTS}${group.id}`, offset: 0, length: 0 }
    }
    if (created && !before.has(group.id)) {
      became.add(group.id)
      d.onAlert(group, d.rule, d.match)
    }
  }
  return { ids, changed: [...changed.values()], contexts, became, whole }
}
