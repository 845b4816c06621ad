// The shared example, run by hand through the scheduled-query seam: the repository's
// `Editor.Audit.AdminGrants.Hourly` (Snowflake path access, p_occurs_since) runs unchanged over
// ingested events at a slot time, its rows come back with lower-cased keys, and the example
// scheduled rule, fed those rows as its events, matches three grants within the hour and not two.
import path from 'node:path'
import t from 'tap'
import { findLogType } from '../../src/ingest/log-types.js'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { ScheduledQueries } from '../../src/query/scheduled-query.js'
import { startInProcess } from '../helpers/in-process.js'
import { DETECT_ENV, postLog } from '../detect/helpers.js'
import { ndjson } from '../ingest/helpers.js'

const SLOT = Date.parse('2026-11-20T09:00:00.000Z')
const grant = (actor: string, at: string, n: number, role = 'admin') => ({
  user_email: actor,
  metadata: { id: `grant-${actor}-${n}`, timestamp: at },
  update_user_role: { old_role: 'member', new_role: role, user_email: `u${n}@example.com` },
})

t.test('the example scheduled query raises the example rule from ingested events', async (t) => {
  const s = await startInProcess({ env: DETECT_ENV })
  t.teardown(() => s.close())
  // Ingested through the real log source: dana grants admin 3 times within the hour, eli twice
  // (one an hour before the window), fay once.
  const events = [
    grant('dana@example.com', '2026-11-20T08:05:00.000Z', 1),
    grant('dana@example.com', '2026-11-20T08:20:00.000Z', 2),
    grant('dana@example.com', '2026-11-20T08:50:00.000Z', 3, 'owner'),
    grant('dana@example.com', '2026-11-20T08:55:00.000Z', 4),
    grant('eli@example.com', '2026-11-20T07:30:00.000Z', 5),
    grant('eli@example.com', '2026-11-20T08:30:00.000Z', 6),
    grant('eli@example.com', '2026-11-20T08:40:00.000Z', 7, 'member'),
    grant('fay@example.com', '2026-11-20T08:10:00.000Z', 8),
  ]
  const posted = await postLog(s, ndjson(events))
  t.equal(posted.status, 200, JSON.stringify(posted.body))
  const engine = await QueryEngine.open({
    logsRoot: path.join(s.dataDir, 'logs'),
    logTypes: [findLogType('Editor.Audit')!],
    settings: DEFAULT_QUERY_SETTINGS,
  })
  t.teardown(() => engine.close())
  const queries = new ScheduledQueries(engine, (name) => s.service.catalog.index.supports.get(name))
  const { rows, cut } = await queries.runScheduledQuery('Editor.Audit.AdminGrants.Hourly', SLOT)
  t.equal(cut, false)
  t.same(
    [...rows].sort((a, b) => String(a.new_role).localeCompare(String(b.new_role))),
    [{ actor: 'dana@example.com', new_role: 'admin', grants: 3 }],
    'one row: dana granted admin 3 times in [08:00, 09:00]; the owner grant is its own group of 1',
  )
  await t.rejects(queries.runScheduledQuery('No.Such.Query', SLOT), {
    name: 'RulekeeperError',
    message: /No.Such.Query/,
  })

  // The example scheduled rule, with each row as its event (its own tests' form).
  const rule = await s.request('GET', '/scheduled-rules/Editor.Audit.AdminGrantsBurst')
  t.equal(rule.status, 200, rule.text)
  const run = await s.request('POST', '/scheduled-rules?run-tests-only=true', {
    ...rule.body,
    id: 'Editor.Audit.AdminGrantsBurst.ByHand',
    tests: [
      { name: 'the query row', expectedResult: true, log: rows[0] },
      { name: 'two grants only', expectedResult: false, log: { ...rows[0], grants: 2 } },
    ],
  })
  t.equal(run.status, 204, 'both tests pass: the rule matches the query row, and not two grants')
  const inverted = await s.request('POST', '/scheduled-rules?run-tests-only=true', {
    ...rule.body,
    id: 'Editor.Audit.AdminGrantsBurst.Inverted',
    tests: [{ name: 'the query row', expectedResult: false, log: rows[0] }],
  })
  t.match(inverted, { status: 400, body: { code: 'TestsFailed' } }, 'a rule that would not match fails the same check')
})
