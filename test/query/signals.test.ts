// The signals table over real detection output: a rule's matches, stored by a detection run in the
// service in process, are rows of correlation_signals (qualified and not) with Panther's column
// names and ours, through POST /queries with Query Data; bytes past the checkpoint (a commit under
// way) are never read; a filter from the time macros leaves other days' files unread; the
// detections folder outside matches/ (checkpoint, alert journal) stays closed to SQL.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { SqlChecker } from '../../src/engine/sql/sql-check.js'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import type { DetectionStore } from '../../src/detect/detection-store.js'

/** A query engine over no log type whose signals table reads `root`'s match files at `committed`. */
function signalsEngine(root: string, committed: () => Record<string, number>): Promise<QueryEngine> {
  return QueryEngine.open({
    logsRoot: path.join(root, '..', 'logs'),
    logTypes: [],
    settings: DEFAULT_QUERY_SETTINGS,
    signals: { detectionsRoot: root, committed },
  })
}

t.test('a detection run’s matches are rows of correlation_signals', async (t) => {
  const s = await startInProcess({ env: DETECT_ENV })
  t.teardown(() => s.close())
  await commandRule(s, 'Sig.Grant', 'grant', { dedupPeriodMinutes: 180 })
  await sendAndDetect(s, [
    commandRecord('sg', 'grant', '2026-11-20T09:10:00.000Z'),
    commandRecord('sg', 'other', '2026-11-20T09:20:00.000Z'),
    commandRecord('sg', 'grant', '2026-11-20T10:40:00.000Z'),
  ])
  const alerts = (await s.request('GET', '/alerts?rule-id=Sig.Grant')).body.results as Array<{ id: string }>
  t.equal(alerts.length, 1)
  const analyst = await s.makeToken('analyst', ['Query Data'])
  const base = s.service.config.api.basePath.replace(/\/$/, '')
  const query = (sql: string) => s.send('POST', `${base}/queries`, { sql }, { 'X-API-Key': analyst })

  const res = await query(
    'SELECT p_rule_id, p_alert_id, p_alert_severity, p_event_time, p_log_type, signal, alert_limited, rule_kind, ' +
      'record_partition, record_offset, p_alert_context, dedup, title, p_date, p_hour FROM correlation_signals ORDER BY p_event_time',
  )
  t.equal(res.status, 200, res.text)
  t.match(res.body.columns, [
    { name: 'p_rule_id', type: 'VARCHAR' },
    { name: 'p_alert_id', type: 'VARCHAR' },
    { name: 'p_alert_severity', type: 'VARCHAR' },
    { name: 'p_event_time', type: 'TIMESTAMP' },
    { name: 'p_log_type', type: 'VARCHAR' },
    { name: 'signal', type: 'BOOLEAN' },
    { name: 'alert_limited', type: 'BOOLEAN' },
    { name: 'rule_kind', type: 'VARCHAR' },
    { name: 'record_partition', type: 'VARCHAR' },
    { name: 'record_offset', type: 'BIGINT' },
    { name: 'p_alert_context', type: 'JSON' },
  ])
  const rows = res.body.rows as Array<Record<string, unknown>>
  t.equal(rows.length, 2, 'one row per match')
  t.match(rows, [
    {
      p_rule_id: 'Sig.Grant',
      p_alert_id: alerts[0]!.id,
      p_alert_severity: String,
      p_event_time: '2026-11-20T09:10:00.000Z',
      p_log_type: 'Editor.Audit',
      signal: false,
      alert_limited: false,
      record_partition: /Editor\.Audit\/dt=2026-11-20\/hour=09\//,
      record_offset: Number,
      dedup: String,
      title: String,
      p_date: '2026-11-20',
      p_hour: 9,
    },
    { p_rule_id: 'Sig.Grant', p_alert_id: alerts[0]!.id, p_event_time: '2026-11-20T10:40:00.000Z', p_hour: 10 },
  ])
  const qualified = await query('SELECT count(*) AS n FROM panther_signals.public.correlation_signals')
  t.same(qualified.body.rows, [{ n: 2 }], 'the qualified name reads the same table')

  // Bytes past the checkpoint (a commit under way: a whole line, then a line cut short) are not read.
  const store = s.server.detection.store as DetectionStore // the default: the file store
  const rel = Object.keys(store.checkpoint.outputs).find((f) => f.includes('hour=10'))!
  fs.appendFileSync(
    path.join(store.root, rel),
    `${JSON.stringify({ id: 'x', ruleId: 'Sig.Grant', eventTime: '2026-11-20T10:50:00.000Z' })}\n{"id":"y","ru`,
  )
  const after = await query("SELECT count(*) AS n FROM correlation_signals WHERE p_rule_id = 'Sig.Grant'")
  t.same(after.body.rows, [{ n: 2 }], 'only committed lines')

  // The detections folder beside matches/ stays closed, and so does a way around through `..`.
  const journal = Object.keys(store.checkpoint.outputs).find((f) => f.startsWith('alerts'))!
  t.ok(journal, 'the alert journal is stored')
  for (const sql of [
    `SELECT * FROM read_text('${path.join(store.root, 'checkpoint.json')}')`,
    `SELECT * FROM read_json('${path.join(store.root, journal)}')`,
    `SELECT * FROM read_text('${path.join(store.root, 'alerts')}/*')`,
    `SELECT * FROM read_text('${path.join(store.root, 'matches')}/../checkpoint.json')`,
  ]) {
    const refused = await query(sql)
    t.match(refused, { status: 400, body: { message: /Permission Error/ } }, sql)
  }
  t.same((await query('SELECT count(*) AS n FROM correlation_signals')).body.rows, [{ n: 2 }], 'the view still works')
})

t.test('the time macros leave other days’ match files unread; nothing committed is an empty table', async (t) => {
  const root = path.join(tempDir(), 'detections')
  const good = 'matches/dt=2026-11-20/hour=09/matches-a.ndjson'
  const bad = 'matches/dt=2026-11-18/hour=03/matches-a.ndjson'
  const line = JSON.stringify({ id: 'm1', ruleId: 'R', eventTime: '2026-11-20T09:05:00.000Z', signal: true })
  for (const [rel, text] of [
    [good, `${line}\n`],
    [bad, 'not json at all\n'],
  ] as const) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  let outputs: Record<string, number> = {}
  const e = await signalsEngine(root, () => outputs)
  t.teardown(() => e.close())
  const run = (sql: string) => e.run({ sql, nowMs: Date.parse('2026-11-20T10:00:00Z'), offset: 0, limit: 10 })
  const empty = await run('SELECT * FROM correlation_signals')
  t.same(empty.rows, [], 'nothing committed: no rows')
  t.equal(empty.columns.find((c) => c.name === 'p_event_time')?.type, 'TIMESTAMP', 'the same columns')

  outputs = { [good]: Buffer.byteLength(line) + 1, [bad]: 16, 'checkpoint.json': 10 }
  t.same((await run("SELECT id, signal FROM correlation_signals WHERE p_occurs_since('2 hours')")).rows, [
    { id: 'm1', signal: true },
  ])
  t.same(
    (
      await run(
        "SELECT count(*) AS n FROM correlation_signals WHERE p_occurs_between('2026-11-20 09:00:00', '2026-11-20 09:59:59')",
      )
    ).rows,
    [{ n: 1 }],
  )
  await t.rejects(
    run("SELECT count(*) FROM correlation_signals WHERE p_event_time >= TIMESTAMP '2026-11-20 09:00:00'"),
    { name: 'RulekeeperError', message: /JSON/ },
    'without the macro the other day’s file is read',
  )
})

t.test('a query file naming the signals table binds at index time', async (t) => {
  const checker = new SqlChecker(() => [editorAuditLogType])
  t.teardown(() => checker.close())
  t.equal(
    await checker.check(
      "SELECT p_rule_id, count(*) FROM panther_signals.public.correlation_signals WHERE p_occurs_since('1 hour') GROUP BY 1",
    ),
    undefined,
  )
  t.match(await checker.check('SELECT nope FROM correlation_signals'), { message: /nope/ })
})

t.test(
  'a committed match file gone from disk leaves the other queries and the rest of the signals readable',
  async (t) => {
    const root = path.join(tempDir(), 'detections')
    const kept = 'matches/dt=2026-11-20/hour=09/matches-a.ndjson'
    const gone = 'matches/dt=2026-11-19/hour=09/matches-a.ndjson'
    const line = JSON.stringify({ id: 'm1', ruleId: 'R', eventTime: '2026-11-20T09:05:00.000Z', signal: true })
    fs.mkdirSync(path.dirname(path.join(root, kept)), { recursive: true })
    fs.writeFileSync(path.join(root, kept), `${line}\n`)
    const outputs = { [kept]: Buffer.byteLength(line) + 1, [gone]: 100 }
    const e = await signalsEngine(root, () => outputs)
    t.teardown(() => e.close())
    const run = (sql: string) => e.run({ sql, nowMs: Date.parse('2026-11-20T10:00:00Z'), offset: 0, limit: 10 })
    t.same((await run('SELECT 1 AS x')).rows, [{ x: 1 }], 'a query not reading signals is answered')
    t.same((await run('SELECT id FROM correlation_signals')).rows, [{ id: 'm1' }], 'the files still there are read')
  },
)
