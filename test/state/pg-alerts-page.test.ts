// The alerts page over PostgreSQL (src/state/pg-alerts.ts, its SQL built from the filters given by
// alert-page-sql.ts) against the in-memory alert index (detect/alert-index.ts) over the same alerts:
// every combination of rule, severity and status filters (one value, several, none, an unknown one,
// more (rule, status) pairs or more rules than MAX_LISTS), with and without time bounds, walked
// page by page through its cursor, gives the same alerts in the same order and the same `next`;
// groups that are not alerts are never listed; a page's alerts carry their context and their
// deliveries as the outbox recorded them.
import pg from 'pg'
import t, { type Test } from 'tap'
import { AlertIndex, type AlertQuery } from '../../src/detect/alert-index.js'
import type { Group } from '../../src/detect/grouping.js'
import { MAX_LISTS } from '../../src/state/alert-page-sql.js'
import { migrate } from '../../src/state/migrations.js'
import { PgAlerts } from '../../src/state/pg-alerts.js'
import { stateText, writeGroups } from '../../src/state/pg-groups.js'
import { inTransaction } from '../../src/state/transaction.js'
import { freshDatabase } from '../helpers/postgres.js'

const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL', 'Custom']
const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED'] as const
const RULES = ['R.a', 'R.b', 'R.c', 'R.d', 'R.e']

/** Group `i`: three groups share each creation instant (ties ordered by id), ids not in creation order. */
function group(i: number): Group {
  const t = new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 3) * 60_000).toISOString()
  return {
    id: `${((i * 7919) % 1000).toString(16).padStart(4, '0')}${'0'.repeat(28)}`,
    ruleId: RULES[(i * 3) % 5]!,
    ruleKind: 'simple',
    revision: null,
    severity: SEVERITIES[i % 6]!,
    title: `alert ${i}`,
    dedup: `u${i}`,
    alertContext: null,
    logTypes: ['Editor.Audit'],
    windowStart: t,
    eventCount: 1,
    firstEventTime: t,
    lastEventTime: t,
    alert: i % 11 !== 5,
    createdAt: t,
    updatedAt: t,
    status: STATUSES[(i >> 1) % 4]!,
    description: '',
    runbook: '',
    reference: '',
    destinations: i === 3 ? [{ id: 'hook', state: 'pending', attempts: 0, lastError: null }] : [],
    summaryCounts: {},
  }
}

async function setUp(t: Test) {
  const url = await freshDatabase()
  const db = new pg.Pool({ connectionString: url, max: 2 })
  t.teardown(() => db.end())
  await migrate(db)
  const groups = Array.from({ length: 330 }, (_, i) => group(i))
  await inTransaction(db, (c) =>
    writeGroups(
      c,
      'test',
      groups.map((g) => ({ g, state: stateText(g) })),
      new Set(),
    ),
  )
  const index = new AlertIndex()
  for (const g of groups) if (g.alert) index.add(g)
  const alerts = new PgAlerts(db, {
    readContext: () => Promise.reject(new Error('no context is read from the ledger here')),
    alertEvents: () => Promise.resolve([]),
  })
  return { db, groups, index, alerts }
}

t.test('every filter combination pages as the in-memory index does', async (t) => {
  const { index, alerts } = await setUp(t)
  const none = (n: number) => Array.from({ length: n }, (_, i) => `R.none${i}`)
  // More (rule, status) pairs than MAX_LISTS with two statuses or more; more rules than MAX_LISTS.
  const mid = [...RULES, ...none(MAX_LISTS / 2 + 1 - RULES.length)]
  const many = [...RULES, ...none(MAX_LISTS)]
  const ruleSets = [undefined, ['R.a'], ['R.b', 'R.d'], ['R.zzz'], ['R.\u0000a'], mid, many]
  const severitySets = [undefined, ['HIGH'], ['LOW', 'CRITICAL', 'LOW'], ['Custom'], []]
  const statusSets = [undefined, ['OPEN'], ['TRIAGED', 'CLOSED'], [...STATUSES], []]
  const bounds = [{}, { createdAfter: '2026-11-01T00:20:00.000Z', createdBefore: '2026-11-01T01:10:00.000Z' }]
  let compared = 0
  for (const ruleIds of ruleSets)
    for (const severities of severitySets)
      for (const statuses of statusSets)
        for (const b of bounds) {
          const q: AlertQuery = { ruleIds, severities, statuses, ...b, limit: 25 }
          let after: AlertQuery['after']
          for (let pageNo = 0; ; pageNo++) {
            const want = index.query({ ...q, after })
            const got = await alerts.query({ ...q, after })
            const same =
              JSON.stringify(got.results.map((g) => g.id)) === JSON.stringify(want.results.map((g) => g.id)) &&
              JSON.stringify(got.next) === JSON.stringify(want.next)
            compared++
            if (!same) {
              t.same(
                { ids: got.results.map((g) => g.id), next: got.next },
                { ids: want.results.map((g) => g.id), next: want.next },
                `page ${pageNo} of ${JSON.stringify(q)}`,
              )
              return
            }
            if (!want.next) break
            after = want.next
          }
        }
  t.pass(`${compared} pages the same`)
  // The cursor inside one instant: the page after the first of three alerts created together.
  const tied = index.query({ limit: 1, after: { createdAt: '2026-11-01T00:30:00.000Z', id: '0000' } })
  t.equal(tied.results[0]?.createdAt, '2026-11-01T00:30:00.000Z', "the cursor's instant's next id follows it")
  t.same(
    (await alerts.query({ limit: 1, after: { createdAt: '2026-11-01T00:30:00.000Z', id: '0000' } })).results.map(
      (g) => g.id,
    ),
    tied.results.map((g) => g.id),
  )
})

t.test("a page's alerts: whole, with their context and their deliveries as recorded", async (t) => {
  const { db, groups, alerts } = await setUp(t)
  const g3 = groups[3]!
  const g4 = groups[4]!
  await db.query('INSERT INTO alert_contexts (group_id, context) VALUES ($1, \'{"user":"u3"}\')', [g3.id])
  await db.query(
    `INSERT INTO deliveries (alert_id, destination_id, state, attempts, last_error, budget_start, next_at)
     VALUES ($1, 'hook', 'failed', 3, 'HTTP 500', now(), now()), ($1, 'mail', 'delivered', 1, NULL, now(), now()),
       ($2, 'hook', 'pending', 0, NULL, now(), now())`,
    [g3.id, g4.id],
  )
  const page = await alerts.query({ limit: 100, createdBefore: '2026-11-01T00:02:00.000Z' })
  const byId = new Map(page.results.map((g) => [g.id, g]))
  t.same(
    page.results.map((g) => g.id),
    [
      [3, 4],
      [0, 1, 2],
    ].flatMap((instant) => instant.map((i) => groups[i]!.id).sort()),
    'newest instant first, ties by id',
  )
  t.same(byId.get(groups[0]!.id), { ...groups[0]!, alertContext: null }, 'the whole group as stored')
  t.same(byId.get(g3.id)?.alertContext, { user: 'u3' }, 'its context')
  const shown = [
    { id: 'hook', state: 'failed', attempts: 3, lastError: 'HTTP 500' },
    { id: 'mail', state: 'delivered', attempts: 1, lastError: null },
  ]
  t.same(byId.get(g3.id)?.destinations, shown, "the outbox's record over the state's own, then the others")
  t.same(byId.get(g4.id)?.destinations, [{ id: 'hook', state: 'pending', attempts: 0, lastError: null }])
  t.same(byId.get(groups[1]!.id)?.destinations, [], 'none recorded: none')
  t.same((await alerts.alert(g3.id))?.destinations, shown, 'one alert read alone: the same')
  t.same((await alerts.alert(g3.id))?.alertContext, { user: 'u3' })
  t.equal(await alerts.alert(groups[5]!.id), undefined, 'a group that is not an alert is not one')
})
