// The vendor's sample files through the ingest endpoint (in process): every valid record in the
// partition of its UTC event hour with its p_* fields, every invalid one in _rejected with the
// documented reason.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { startIngestInProcess } from './fixtures/ingest-in-process.js'
import { EXAMPLES, TOKEN, storedLines, storedRecords, tempDataDir } from './helpers.js'

const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }

t.test('every valid sample lands in the partition of its UTC event hour', async (t) => {
  const dataDir = await tempDataDir(t)
  const server = await startIngestInProcess({ dataDir, env })
  t.teardown(() => server.close())
  const body = await readFile(path.join(EXAMPLES, 'valid.ndjson'))
  const sent = body
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const res = await server.post('/http/editor-audit', body)
  t.equal(res.status, 200)
  t.same(res.body, { accepted: 21, rejected: 0, duplicates: 0, unknownKind: 1, errors: [] })

  const stored = await storedRecords(dataDir)
  t.equal(stored.length, sent.length, 'one stored line per sent record')
  t.same(await storedLines(dataDir, '_rejected'), [])
  for (const { file, record } of stored) {
    const when = new Date(record.metadata.timestamp).toISOString()
    const dir = path.dirname(file)
    t.equal(
      dir,
      `Editor.Audit/dt=${when.slice(0, 10)}/hour=${when.slice(11, 13)}`,
      `partition of ${record.metadata.id}`,
    )
    t.equal(record.p_event_time, when)
    t.equal(record.p_log_type, 'Editor.Audit')
    t.equal(record.p_source_id, 'editor-audit')
    t.match(record.p_parse_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  }
  const byId = new Map(stored.map((s) => [s.record.metadata.id, s]))
  t.equal(new Set(stored.map((s) => s.record.p_row_id)).size, stored.length, 'p_row_id is unique')

  // 10:00+02:00 is 08:00 UTC: the hour=08 partition, not hour=10.
  const plusTwo = byId.get('923a7369-94e3-bf91-1a61-dbe22e44158b')!
  t.equal(path.dirname(plusTwo.file), 'Editor.Audit/dt=2026-11-20/hour=08')
  t.equal(plusTwo.record.p_event_time, '2026-11-20T08:00:00.000Z')
  t.equal(plusTwo.record.metadata.timestamp, '2026-11-20T10:00:00+02:00', 'the original timestamp is kept as sent')
  // Either side of midnight UTC.
  t.equal(path.dirname(byId.get('ae658f33-fe3b-890b-93f4-48b3a5aa3c81')!.file), 'Editor.Audit/dt=2026-11-20/hour=23')
  t.equal(path.dirname(byId.get('58d5563d-ab2c-d31e-e315-128862c33a4f')!.file), 'Editor.Audit/dt=2026-11-21/hour=00')

  // Every record is stored as sent plus p_* fields, except counts sent as strings become numbers.
  for (const original of sent) {
    const { record } = byId.get(original.metadata.id)!
    const withoutP = Object.fromEntries(Object.entries(record).filter(([k]) => !k.startsWith('p_')))
    if (original.invite_link) original.invite_link.expires_in_seconds = Number(original.invite_link.expires_in_seconds)
    t.same(withoutP, original, `record ${original.metadata.id} kept as sent`)
  }
  t.equal(byId.get('92276658-1e27-a1c0-8a6a-63ec24ede6a4')!.record.invite_link.expires_in_seconds, 604800)

  const invite = byId.get('8e81973e-0bec-d7b0-3898-d190f9ebdacc')!.record
  t.same(invite.p_any_emails, ['dana@example.com', 'fay@example.org'])
  t.same(invite.p_any_ip_addresses, ['203.0.113.10'])
  t.same(invite.p_any_trace_ids, ['8e81973e-0bec-d7b0-3898-d190f9ebdacc', 'req_6b4cb2424a23d596'])
  t.same(invite.p_any_actor_ids, ['idp|dana'])
  const system = byId.get('58d5563d-ab2c-d31e-e315-128862c33a4f')!.record
  t.same(system.p_any_ip_addresses, [], '"unknown" is not an indicator')
  t.same(system.p_any_emails, ['hal@example.com'])
  t.same(byId.get('ae658f33-fe3b-890b-93f4-48b3a5aa3c81')!.record.p_any_emails, ['dana@example.com', 'gus@example.com'])
  const unknownKind = byId.get('7e62aa0a-1df9-fd78-9c65-39382b0537e6')!.record
  t.same(
    unknownKind.cloud_agent_secret,
    { action: 'create', secret_name: 'NPM_TOKEN' },
    'an unknown kind is kept as it came',
  )

  const metrics = await server.metrics.metrics()
  t.match(metrics, /rulekeeper_ingest_records_total\{source="editor-audit",outcome="accepted"\} 21/)
  t.match(metrics, /rulekeeper_ingest_records_total\{source="editor-audit",outcome="unknown_kind"\} 1/)
  t.match(metrics, /rulekeeper_ingest_fsync_seconds_count\{source="editor-audit"\} [1-9]/)
  t.match(metrics, /rulekeeper_ingest_deliveries_total\{source="editor-audit",status="200"\} 1/)
})

t.test('every invalid sample is kept in _rejected with its reason', async (t) => {
  const dataDir = await tempDataDir(t)
  const server = await startIngestInProcess({ dataDir, env })
  t.teardown(() => server.close())
  const body = await readFile(path.join(EXAMPLES, 'invalid.ndjson'), 'utf8')
  const lines = body.trim().split('\n')
  const sentAt = new Date().toISOString()
  const res = await server.post('/http/editor-audit', body)
  const answeredAt = new Date().toISOString()
  t.equal(res.status, 200)
  t.equal(res.body.accepted, 0)
  t.equal(res.body.rejected, 6)
  t.equal(res.body.duplicates, 0)
  const expected: Array<[number, RegExp]> = [
    [0, /metadata\.timestamp is required/],
    [1, /metadata\.timestamp must be an RFC 3339 date-time/],
    [2, /login\.success must be a boolean/],
    [3, /team_hook\.operating_systems must be an array/],
    [4, /user_spend_limit\.new_limit_cents must be an integer/],
    [5, /not a JSON object/],
  ]
  t.same(
    res.body.errors.map((e: any) => e.index),
    [0, 1, 2, 3, 4, 5],
  )
  for (const [i, re] of expected) {
    t.match(res.body.errors[i].message, re)
    t.equal(res.body.errors[i].line, i + 1)
  }

  t.same(await storedRecords(dataDir), [], 'nothing invalid reaches the data partitions')
  const rejected = await storedLines(dataDir, '_rejected')
  t.equal(rejected.length, 6)
  for (const [i, line] of rejected.entries()) {
    const r = JSON.parse(line.text)
    t.match(r.receivedAt, /^\d{4}-\d\d-\d\dT/)
    t.ok(r.receivedAt >= sentAt && r.receivedAt <= answeredAt, `received (${r.receivedAt}) during the POST`)
    // The arrival date as recorded (a run straddling midnight UTC has two dates around the POST).
    const arrived = r.receivedAt.slice(0, 10)
    t.equal(path.dirname(line.file), `_rejected/Editor.Audit/dt=${arrived}`, 'rejected area is by arrival date')
    t.match(r.error, expected[i]![1])
    t.equal(r.sourceId, 'editor-audit')
    t.same(r.raw, JSON.parse(lines[i]!), 'raw is the record exactly as sent')
  }
})

t.test('valid and invalid mixed in one delivery are counted apart', async (t) => {
  const dataDir = await tempDataDir(t)
  const server = await startIngestInProcess({ dataDir, env })
  t.teardown(() => server.close())
  const valid = (await readFile(path.join(EXAMPLES, 'valid.ndjson'), 'utf8')).trim().split('\n')
  const invalid = (await readFile(path.join(EXAMPLES, 'invalid.ndjson'), 'utf8')).trim().split('\n')
  const mixed = [valid[0], invalid[0], valid[1], 'this line is not JSON', valid[2]].join('\n')
  const res = await server.post('/http/editor-audit', mixed)
  t.equal(res.status, 200)
  t.same({ a: res.body.accepted, r: res.body.rejected }, { a: 3, r: 2 })
  t.same(
    res.body.errors.map((e: any) => e.index),
    [1, 3],
  )
  t.match(res.body.errors[1].message, /line 4 is not JSON/)
  t.equal((await storedRecords(dataDir)).length, 3)
  const rejected = (await storedLines(dataDir, '_rejected')).map((l) => JSON.parse(l.text))
  t.equal(rejected[1].raw, 'this line is not JSON', 'an unreadable line is kept as a string')
})
