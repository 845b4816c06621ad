// POST /queries through the real service: Query Data is needed (401 without a token, 403 without
// the permission, the bootstrap token has it), the shared example's Snowflake-style query runs
// unchanged over stored events, pages follow through `next`, and bad SQL, refused statements,
// oversized SQL and bad page sizes or cursors are 4xx with a message.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { writeEvents } from '../query/stored.js'

const EXAMPLE = `SELECT user_email AS actor, update_user_role:new_role::string AS new_role, COUNT(*) AS grants
FROM editor_audit
WHERE p_occurs_since('1 hour')
  AND update_user_role:new_role::string IN ('admin', 'owner')
GROUP BY 1, 2
HAVING COUNT(*) > 1`

t.test('POST /queries', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const base = s.service.config.api.basePath.replace(/\/$/, '')
  const url = `${base}/queries`
  const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString()
  writeEvents(path.join(s.dataDir, 'logs'), [
    { at: recent(20), role: 'admin', actor: 'dana@example.com' },
    { at: recent(10), role: 'admin', actor: 'dana@example.com' },
    { at: recent(5), role: 'member', actor: 'dana@example.com' },
    { at: recent(30), role: 'owner', actor: 'eli@example.com' },
    { at: recent(180), role: 'admin', actor: 'eli@example.com' },
    { at: recent(1), actor: 'fay@example.com' },
  ])

  t.equal((await s.send('POST', url, { sql: 'SELECT 1' })).status, 401, 'no token')
  const viewer = await s.makeToken('viewer', ['View Rules', 'View Alerts'])
  const forbidden = await s.send('POST', url, { sql: 'SELECT 1' }, { 'X-API-Key': viewer })
  t.equal(forbidden.status, 403)
  t.match(forbidden.body, { message: /Query Data/ })
  const analyst = await s.makeToken('analyst', ['Query Data'])
  const ok = await s.send('POST', url, { sql: EXAMPLE }, { 'X-API-Key': analyst })
  t.equal(ok.status, 200, ok.text)
  t.same(ok.body, {
    columns: [
      { name: 'actor', type: 'VARCHAR' },
      { name: 'new_role', type: 'VARCHAR' },
      { name: 'grants', type: 'BIGINT' },
    ],
    rows: [{ actor: 'dana@example.com', new_role: 'admin', grants: 2 }],
    next: null,
  })
  const boot = await s.request('POST', url, { sql: 'SELECT count(*) AS n FROM panther_logs.public.editor_audit' })
  t.same(boot.body.rows, [{ n: 6 }], 'the bootstrap token has Query Data; the qualified name reads the same table')

  // Pages: 6 rows by 4, then 2; the cursor goes with its SQL.
  const sql = 'SELECT p_row_id, p_event_time, update_user_role FROM editor_audit ORDER BY p_event_time'
  const p1 = await s.request('POST', url, { sql, pageSize: 4 })
  t.equal(p1.body.rows.length, 4)
  t.type(p1.body.next, 'string')
  t.match(p1.body.rows[0], {
    p_event_time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    update_user_role: { new_role: 'admin' },
  })
  const p2 = await s.request('POST', url, { sql, pageSize: 4, cursor: p1.body.next })
  t.equal(p2.body.rows.length, 2)
  t.equal(p2.body.next, null)
  t.same(
    [...p1.body.rows, ...p2.body.rows].map((r: { p_row_id: string }) => r.p_row_id).sort(),
    (await s.request('POST', url, { sql, pageSize: 100 })).body.rows
      .map((r: { p_row_id: string }) => r.p_row_id)
      .sort(),
    'the pages hold every row once',
  )
  const foreign = await s.request('POST', url, { sql: 'SELECT 1', cursor: p1.body.next })
  t.match(foreign, { status: 400, body: { message: /another query/ } })

  const bad = await s.request('POST', url, { sql: 'SELECT nope\nFROM editor_audit' })
  t.match(bad, { status: 400, body: { code: 'BadRequest', message: /Binder Error.*nope/s, line: 1, column: 8 } })
  const refused = await s.request('POST', url, {
    sql: `COPY (SELECT 1) TO '${path.join(s.dataDir, 'logs', 'Editor.Audit', 'x.csv')}'`,
  })
  t.match(refused, { status: 400, body: { message: /only SELECT/ } })
  t.notOk(fs.existsSync(path.join(s.dataDir, 'logs', 'Editor.Audit', 'x.csv')), 'COPY wrote nothing')
  const big = await s.request('POST', url, { sql: `SELECT '${'x'.repeat(70 * 1024)}'` })
  t.equal(big.status, 413)
  for (const body of [
    {},
    { sql: '' },
    { sql: 'SELECT 1', pageSize: 0 },
    { sql: 'SELECT 1', pageSize: 1001 },
    { sql: 'SELECT 1', extra: 1 },
    { sql: 'SELECT 1', cursor: 'zz' },
  ])
    t.equal((await s.request('POST', url, body)).status, 400, JSON.stringify(body))
})
