// Scheduled and saved queries as an API resource (/queries/scheduled, /queries/saved): read with
// View Rules, written with Manage Rules as one commit each (author, trailers, reason, If-Match);
// their SQL bound by DuckDB when the file is read — a pushed query that cannot run is an invalid
// file with the line and column of the SQL's problem in the YAML file, an API write of one is a 400 —
// and a query stays what scheduled rules name (no UnknownScheduledQuery warning).
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}

/** One plain-git commit on main writing `files` (path → text). */
function push(s: InProcessServer, files: Record<string, string>): void {
  const head = s.git('rev-parse', 'main').trim()
  const input = [
    `commit refs/heads/main\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 5\npush\nfrom ${head}\n`,
    ...Object.entries(files).map(([p, text]) => `M 100644 inline ${p}\ndata ${Buffer.byteLength(text)}\n${text}\n`),
  ].join('')
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input, env })
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`)
}

t.test('queries are served, written as commits, and permissioned like rules', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())

  // The template's scheduled query is served.
  const list = await s.request('GET', '/queries/scheduled')
  t.equal(list.status, 200)
  t.ok(list.body.results.some((q: { id: string }) => q.id === 'Editor.Audit.AdminGrants.Hourly'))
  const one = await s.request('GET', '/queries/scheduled/Editor.Audit.AdminGrants.Hourly')
  t.equal(one.status, 200)
  t.match(one.body, {
    id: 'Editor.Audit.AdminGrants.Hourly',
    enabled: true,
    query: /p_occurs_since\('1 hour'\)/,
    schedule: { RateMinutes: 60, TimeoutMinutes: 5 },
  })
  t.ok(one.headers.get('etag'))
  t.same((await s.request('GET', '/queries/saved')).body.results, [])
  // In the OpenAPI document, beside POST /queries.
  const doc = (await s.send('GET', '/openapi.json')).body
  for (const p of [
    '/queries',
    '/queries/saved',
    '/queries/saved/{id}',
    '/queries/scheduled',
    '/queries/scheduled/{id}',
  ])
    t.ok(p in doc.paths, `${p} is documented`)
  t.ok(doc.components.schemas.ScheduledQuery, 'the ScheduledQuery schema')
  t.equal((await s.request('GET', '/queries/saved/Nope')).status, 404)

  // Permissions: View Rules reads, Manage Rules writes.
  const viewer = await s.makeToken('viewer', ['View Rules'])
  const analyst = await s.makeToken('analyst', ['Query Data'])
  t.equal((await s.send('GET', '/queries/saved')).status, 401)
  t.equal((await s.send('GET', '/queries/saved', undefined, { 'X-API-Key': analyst })).status, 403)
  t.equal((await s.send('GET', '/queries/saved', undefined, { 'X-API-Key': viewer })).status, 200)
  const body = { id: 'Team.Logins', description: 'Logins', query: 'SELECT user_email FROM editor_audit' }
  t.equal((await s.send('POST', '/queries/saved', body, { 'X-API-Key': viewer })).status, 403)

  // Create: one commit, its trailers and reason, the file in queries/.
  const created = await s.request('POST', '/queries/saved', body, { 'X-Change-Reason': 'for the team' })
  t.equal(created.status, 200, created.text)
  t.match(created.body, { id: 'Team.Logins', query: body.query, createdBy: { type: 'api-token' } })
  t.notOk('severity' in created.body)
  const message = s.git('log', '-1', '--format=%B')
  t.match(message, /for the team/)
  t.match(message, /Rule-Id: Team\.Logins/)
  t.match(message, /Rule-Kind: savedQuery/)
  const text = s.git('show', 'HEAD:saved_queries/team/Team.Logins.yml')
  t.match(text, /^AnalysisType: saved_query$/m)
  t.match(text, /^QueryName: Team\.Logins$/m)
  t.notMatch(text, /Enabled|Severity|Tests/, 'only the keys of the format')

  // Replace with If-Match; a stale ETag is a 412 and changes nothing.
  const etag = created.headers.get('etag')!
  const replaced = await s.request(
    'PUT',
    '/queries/saved/Team.Logins',
    { ...body, query: 'SELECT count(*) AS n FROM editor_audit' },
    { 'If-Match': etag },
  )
  t.equal(replaced.status, 200, replaced.text)
  const stale = await s.request('PUT', '/queries/saved/Team.Logins', body, { 'If-Match': etag })
  t.equal(stale.status, 412)
  t.equal((await s.request('GET', '/queries/saved/Team.Logins')).body.query, 'SELECT count(*) AS n FROM editor_audit')

  // SQL that does not bind is a 400 at /query with DuckDB's message and position; nothing saved.
  const commits = s.git('rev-list', '--count', 'HEAD')
  const bad = await s.request('PUT', '/queries/saved/Team.Logins', {
    ...body,
    query: 'SELECT user_email\nFROM editor_audit\nWHERE nope = 1',
  })
  t.equal(bad.status, 400, bad.text)
  t.match(bad.body.errors, [{ path: '/query', message: /line 3, column 7 of the SQL.*nope/s }])
  const notSelect = await s.request('POST', '/queries/saved', {
    ...body,
    id: 'Team.Drop',
    query: 'CREATE TABLE t AS SELECT 1',
  })
  t.match(notSelect.body.errors, [{ path: '/query', message: /only SELECT/ }])
  // A scheduled query needs its schedule, by rate or by cron.
  const noRate = await s.request('POST', '/queries/scheduled', {
    id: 'Team.Hourly',
    enabled: true,
    query: 'SELECT 1',
    schedule: { TimeoutMinutes: 5 },
  })
  t.match(noRate, { status: 400, body: { errors: [{ path: '/schedule', message: /CronExpression and RateMinutes/ }] } })
  t.equal(s.git('rev-list', '--count', 'HEAD'), commits, 'no commit for a refused write')

  // Delete: one commit; the query is gone.
  t.equal((await s.request('DELETE', '/queries/saved/Team.Logins')).status, 204)
  t.match(s.git('log', '-1', '--format=%s'), /^Delete savedQuery rule Team\.Logins/)
  t.equal((await s.request('GET', '/queries/saved/Team.Logins')).status, 404)
})

t.test('a pushed query whose SQL does not bind is an invalid file, located in the YAML', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  push(s, {
    'queries/broken.yml':
      'AnalysisType: saved_query\nQueryName: Broken.Query\nQuery: |\n  SELECT user_email\n  FROM editor_audit\n  WHERE nope = 1\n',
    'queries/one_line.yml': 'AnalysisType: saved_query\nQueryName: One.Line\nQuery: SELECT nope FROM editor_audit\n',
    'queries/ok.yml':
      "AnalysisType: saved_query\nQueryName: Fine.Query\nQuery: SELECT * FROM panther_logs.public.editor_audit WHERE p_occurs_since('1 day')\n",
  })
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  const invalid = await s.request('GET', '/status/invalid-files')
  const byPath = new Map(
    (
      invalid.body.results as Array<{ path: string; errors: Array<{ message: string; line: number; column: number }> }>
    ).map((f) => [f.path, f.errors]),
  )
  // `WHERE nope = 1` is the SQL's line 3, column 7: the file's line 6, after the block's two spaces.
  t.match(byPath.get('queries/broken.yml'), [{ message: /Binder Error.*nope/s, line: 6, column: 9 }])
  t.match(byPath.get('queries/one_line.yml'), [{ message: /nope/, line: 3, column: 15 }])
  t.notOk(byPath.has('queries/ok.yml'))
  t.equal((await s.request('GET', '/queries/saved/Fine.Query')).status, 200)
  t.equal((await s.request('GET', '/queries/saved/Broken.Query')).status, 404, 'an invalid query is not served')
})

t.test('a scheduled rule naming a served query has no warning; one naming none has', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const rule = (id: string, query: string) => ({
    id,
    severity: 'LOW',
    scheduledQueries: [query],
    body: 'def rule(event):\n    return True\n',
  })
  const known = await s.request(
    'POST',
    '/scheduled-rules?run-tests-first=false',
    rule('Sched.Known', 'Editor.Audit.AdminGrants.Hourly'),
  )
  t.equal(known.status, 200, known.text)
  t.same(known.body.warnings, [])
  const unknown = await s.request('POST', '/scheduled-rules?run-tests-first=false', rule('Sched.Unknown', 'No.Such'))
  t.match(unknown.body.warnings, [{ message: /No\.Such/ }])
})
