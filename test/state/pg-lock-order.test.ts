// A detection commit and a bulk triage over the PostgreSQL store lock the same rows: the commit its
// ordinary groups (placed in the store) and the correlation groups it writes whole, the triage the
// alerts it changes. Both take their row locks in one id order (pg-groups.ts decideGroups locks
// both sets in one statement; pg-alerts.ts by id), so neither is a deadlock victim: a triage that
// holds a correlation alert and waits for another writer, while the commit waits for that alert,
// completes, and so does the commit (found by a review: the commit locked ordinary rows first).
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import type { GroupDelta } from '../../src/detect/detection-ledger.js'
import { alertId, type Group } from '../../src/detect/grouping.js'
import { PgLedger } from '../../src/state/pg-ledger.js'
import { group } from '../detect/ledgers.js'
import { ruleMeta } from '../detect/rule-meta.js'
import { freshDatabase } from '../helpers/postgres.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })
const NOW = Date.UTC(2026, 10, 20, 10)
const rule = ruleMeta({ id: 'R.Ordinary', threshold: 1 })
const fields = (dedup: string) => ({ title: 't', dedup, severity: 'HIGH', alertContext: { dedup } })
const delta = (dedup: string): GroupDelta => ({
  rule,
  match: fields(dedup) as any,
  eventMs: NOW,
  event: {},
  now: NOW,
  onAlert: () => {},
})
const line = (dedup: string) =>
  JSON.stringify({ alertId: null, ruleId: rule.id, dedup, eventTime: '2026-11-20T10:00:00.000Z' })

t.test('a triage crossing a detection commit: both go through', async (t) => {
  const url = await freshDatabase()
  const ledger = await PgLedger.connect({ url, replica: 'a' }, logger)
  t.teardown(() => ledger.close())
  // O: an ordinary alert decided in the store (its id a hash, > '0001...').
  ledger.addGroupMatch('2026-11-20T10:00:00.000Z', line('o'), delta('o'))
  const C = group('0000000000000000000000000000000c', {
    ruleId: 'C.Corr',
    ruleKind: 'correlation',
    alert: true,
    createdAt: '2026-11-20T10:00:00.000Z',
  })
  const B = group('0001000000000000000000000000000b', {
    ruleId: 'C.Corr',
    ruleKind: 'correlation',
    dedup: 'b',
    alert: true,
    createdAt: '2026-11-20T10:00:00.000Z',
  })
  ledger.addGroup(C)
  ledger.addGroup(B)
  await ledger.commit({})
  const O = alertId(rule.id, 'o', NOW)
  t.ok(O > B.id, 'ids in order C < B < O')

  // Y holds B (another writer); the triage locks C, then waits for B.
  const y = new pg.Client({ connectionString: url })
  await y.connect()
  t.teardown(() => y.end())
  await y.query('BEGIN')
  await y.query('SELECT 1 FROM alert_groups WHERE id = $1 FOR UPDATE', [B.id])
  const triage = ledger.alerts.change([C.id, B.id, O], { status: 'TRIAGED', actor: { kind: 'user', id: 'u' } } as any)
  const waiting = async (n: number) =>
    waitFor(`${n} backends waiting on a lock`, async () => {
      await y.query('SELECT pg_stat_clear_snapshot()')
      const { rows } = await y.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
      return rows[0].n >= n ? true : undefined
    })
  await waiting(1)
  // The detection commit: a match of O's group (locks O), and C written whole (waits for the triage).
  ledger.addGroupMatch('2026-11-20T10:00:00.000Z', line('o'), delta('o'))
  ledger.addGroup({ ...C, eventCount: 2 } as Group)
  const commit = ledger.commit({})
  commit.catch(() => {})
  await waiting(2)
  await y.query('ROLLBACK') // the triage takes B, then asks for O: the cycle
  const [c, tr] = await Promise.allSettled([commit, triage])
  t.equal(tr.status, 'fulfilled', 'the triage went through')
  t.equal(
    c.status,
    'fulfilled',
    `the detection commit went through (${c.status === 'rejected' ? `${(c.reason as any).code} ${(c.reason as Error).message}` : ''})`,
  )
})
