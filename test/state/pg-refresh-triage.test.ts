// A correlation rule's alert triaged by an analyst over the PostgreSQL store, then a run of the
// rule whose commit dies, then the next run (the rule's groups read again first, as
// correlation-schedule.ts does, or not): the analyst's status is kept either way. The book keeps its
// own copy of a group with a change not yet durable, and the store counts as seen only the triage
// of the copies the book took (found by a review: both were taken as seen, so the book's stale
// triage overwrote the analyst's).
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { PgLedger } from '../../src/state/pg-ledger.js'
import { ruleMeta } from '../detect/rule-meta.js'
import { freshDatabase } from '../helpers/postgres.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })
const NOW = Date.UTC(2026, 10, 20, 10)
const rule = ruleMeta({ id: 'C.Corr', kind: 'correlation', threshold: 1 })
const match = { title: 't', dedup: 'd', severity: 'HIGH', alertContext: { d: 1 } } as any
const actor = { id: 'tok', type: 'api-token' as const, name: 'analyst' }
const line = (n: number) => ['2026-11-20T10:00:00.000Z', { n, ruleId: rule.id }] as any

// The commit dies before it writes the group (at its match lines) or after (at its checkpoint).
for (const table of ['detection_matches', 'detection_checkpoints'])
  for (const refresh of [false, true])
    t.test(`analyst's status after a run dying at ${table}, then the next run (refresh ${refresh})`, async (t) => {
      const url = await freshDatabase()
      const ledger = await PgLedger.connect({ url, replica: 'a' }, logger)
      const book = new AlertBook(ledger, {})
      t.teardown(() => book.close())
      const run = (n: number) => {
        const { group, created } = book.addEvents(rule, match, NOW, [{ eventMs: NOW + n, event: {} }], Date.now())
        return book
          .commitOutput({
            matches: [line(n)],
            groups: [group],
            created: created ? [{ group, rule, match }] : [],
            errors: [],
          })
          .then(() => group.id)
      }
      const id = await run(1)
      t.equal((await ledger.alerts.change([id], { status: 'CLOSED', actor }))[0]?.status, 'CLOSED')

      // A run whose commit dies (the table locked, its backend killed while it waits there).
      const blocker = new pg.Client({ connectionString: url })
      await blocker.connect()
      t.teardown(() => blocker.end())
      await blocker.query('BEGIN')
      await blocker.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`)
      const failing = run(2)
      const pid = await waitFor('the commit waiting', async () => {
        const { rows } = await blocker.query(
          `SELECT pid FROM pg_locks WHERE NOT granted AND relation = '${table}'::regclass`,
        )
        return rows[0]?.pid as number | undefined
      })
      // Its failure is awaited from before the kill (it may come before the kill's own answer).
      const failed = t.rejects(failing)
      await blocker.query('SELECT pg_terminate_backend($1)', [pid])
      await failed
      await blocker.query('ROLLBACK')

      // The next run of the rule (as correlation-schedule.ts does it).
      if (refresh) await book.refreshGroups([rule.id], 0)
      await run(3)
      t.equal((await ledger.alerts.alert(id))?.status, 'CLOSED', "the analyst's status kept")
    })
