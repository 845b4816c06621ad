// Rule errors through the API, in process, from a real Python rule that raises in the real sandbox on
// records POSTed to the real log source: GET /rule-errors filtered by rule id and `since`;
// /rule-errors/groups folds one rule's errors of the same text into one entry with its count, its
// first and last time, its kind and the latest record, in cursor pages; /rule-errors/record reads
// that record as stored, and only a location some rule error names; bad input is a 400 that says
// why; a token without View Alerts is refused.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ndjson, TOKEN } from '../ingest/helpers.js'
import { commandRecord, DETECT_ENV } from '../detect/helpers.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const RAISES = `def rule(event):
    if event.deep_get("team_command", "command_name") == "boom":
        raise ValueError("boom on " + str(event.get("user_email")))
    if event.deep_get("team_command", "command_name") == "zero":
        return 1 / 0
    return False
`

async function send(s: InProcessServer, records: unknown[]): Promise<void> {
  const res = await s.send('POST', '/http/editor-audit', ndjson(records), {
    Authorization: `Bearer ${TOKEN}`,
    'Content-Type': 'application/x-ndjson',
  })
  if (res.status !== 200) throw new Error(`ingest: ${res.status} ${res.text}`)
  await s.service.detection.detector.idle()
}

t.test('rule errors: list, since, groups with counts, the record', async (t) => {
  const s = await startInProcess({ env: DETECT_ENV })
  t.teardown(() => s.close())
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Raises', { body: RAISES, tests: [] }))
  t.equal(created.status, 200, created.text)

  const boom = (n: number) =>
    commandRecord('re', 'boom', `2026-11-20T10:0${n}:00Z`, { user_email: 'dana@example.com', n })
  await send(s, [
    boom(1),
    boom(2),
    commandRecord('re', 'zero', '2026-11-20T10:03:00Z'),
    commandRecord('re', 'fine', '2026-11-20T10:04:00Z'),
  ])
  const between = new Date().toISOString()
  // wait: the clock moves past `between`
  await new Promise((r) => setTimeout(r, 5)) // the next errors' time is after `between`
  const last = boom(5)
  await send(s, [last])

  const all = await s.request('GET', '/rule-errors?rule-id=Py.Raises&limit=1000')
  t.equal(all.status, 200, all.text)
  t.equal(all.body.results.length, 4, 'one error per record that raised')
  t.match(all.body.results[0].error, /ValueError: boom on dana@example.com/, 'newest first, with the message')
  t.match(all.body.results[0].error, /Traceback|line \d+/, 'and the traceback')

  const since = await s.request('GET', `/rule-errors?rule-id=Py.Raises&since=${between}`)
  t.equal(since.status, 200)
  t.equal(since.body.results.length, 1, 'since: only the errors at or after it')
  t.equal(since.body.next, null)

  const groups = await s.request('GET', '/rule-errors/groups?rule-id=Py.Raises')
  t.equal(groups.status, 200, groups.text)
  const [first, second] = groups.body.results
  t.equal(groups.body.results.length, 2, 'one entry per rule and error text')
  t.match(first, { ruleId: 'Py.Raises', ruleKind: 'python', count: 3, revision: s.service.catalog.index.revision })
  t.match(first.error, /ValueError: boom on dana@example.com/)
  t.ok(first.firstTime < first.lastTime, 'first and last time')
  t.match(second, { ruleId: 'Py.Raises', count: 1 })
  t.match(second.error, /ZeroDivisionError/)
  t.ok(first.lastTime >= second.lastTime, 'the latest first')

  const sinceGroups = await s.request('GET', `/rule-errors/groups?since=${between}`)
  t.same(
    sinceGroups.body.results.map((g: any) => [g.ruleId, g.count]),
    [['Py.Raises', 1]],
    'since: counts only what came from then on',
  )

  const p1 = await s.request('GET', '/rule-errors/groups?rule-id=Py.Raises&limit=1')
  t.equal(p1.body.results.length, 1)
  t.type(p1.body.next, 'string')
  const p2 = await s.request('GET', `/rule-errors/groups?rule-id=Py.Raises&limit=1&cursor=${p1.body.next}`)
  t.same(
    [...p1.body.results, ...p2.body.results].map((g: any) => g.error),
    groups.body.results.map((g: any) => g.error),
    'pages follow each other',
  )
  t.equal(p2.body.next, null)

  // The record of the latest error, read through the API as stored.
  const { partition, offset } = first.record
  const rec = await s.request('GET', `/rule-errors/record?partition=${encodeURIComponent(partition)}&offset=${offset}`)
  t.equal(rec.status, 200, rec.text)
  t.equal(rec.body.metadata.id, (last.metadata as { id: string }).id, 'the record that caused the latest error')
  t.equal(rec.body.n, 5)
  t.equal(rec.body.p_log_type, 'Editor.Audit', 'as stored, with its p_ fields')

  const bad = async (query: string, status: number, message: RegExp) => {
    const r = await s.request('GET', `/rule-errors${query}`)
    t.equal(r.status, status, `${query}: ${r.text}`)
    t.match(r.body?.message, message)
  }
  // A location no rule error names is not read, even a real record's (the one that raised nothing).
  const lines = readFileSync(path.join(s.dataDir, 'logs', partition), 'utf8').split('\n')
  const fineLine = lines.findIndex((l) => l.includes('"command_name":"fine"'))
  t.ok(fineLine > 0, 'the record that raised nothing is stored there')
  const fineAt = lines.slice(0, fineLine).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)
  await bad(`/record?partition=${encodeURIComponent(partition)}&offset=${fineAt}`, 404, /no rule error names/)
  await bad(`/record?partition=${encodeURIComponent(partition)}&offset=${offset + 1}`, 404, /no rule error names/)
  await bad(`/record?partition=../../tokens.json&offset=0`, 404, /no rule error names/)
  await bad(`/record?partition=${encodeURIComponent(partition)}`, 400, /partition and offset are required/)
  await bad(`/record?partition=x&offset=-1`, 400, /offset must be a non-negative integer/)
  await bad('?since=yesterday', 400, /since must be an RFC 3339 time/)
  await bad('/groups?since=2026-13-01', 400, /since must be an RFC 3339 time/)
  await bad('/groups?cursor=nope', 400, /cursor is not valid/)
  await bad('/groups?rule=Py.Raises', 400, /unknown query parameter "rule"/)
  await bad('?limit=0', 400, /limit must be an integer/)

  const viewer = await s.makeToken('viewer', ['View Rules'])
  for (const p of ['/rule-errors', '/rule-errors/groups', `/rule-errors/record?partition=x&offset=0`]) {
    const r = await s.send('GET', p, undefined, { 'X-API-Key': viewer })
    t.equal(r.status, 403, `${p}: needs View Alerts`)
  }
})
