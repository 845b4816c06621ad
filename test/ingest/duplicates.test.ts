// The duplicate filter on metadata.id: within a request, across requests, under concurrency, and
// across a restart (it is rebuilt from the stored files), and only within its window.
import { appendFile, mkdir, utimes } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { DuplicateFilter } from '../../src/ingest/duplicate-filter.js'
import { startIngestInProcess } from './fixtures/ingest-in-process.js'
import { TOKEN, makeRecord, ndjson, storedRecords, tempDataDir } from './helpers.js'

const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }
const ids = (records: Array<{ record: any }>) => records.map((r) => r.record.metadata.id).sort()

t.test('a retried delivery is acknowledged as duplicates and stored once', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s.close())
  const batch = ndjson([makeRecord('d-1'), makeRecord('d-2'), makeRecord('d-3')])
  const first = await s.post('/http/editor-audit', batch)
  t.same({ a: first.body.accepted, d: first.body.duplicates }, { a: 3, d: 0 })
  const again = await s.post('/http/editor-audit', batch)
  t.equal(again.status, 200)
  t.same({ a: again.body.accepted, d: again.body.duplicates, r: again.body.rejected }, { a: 0, d: 3, r: 0 })
  const partly = await s.post('/http/editor-audit', ndjson([makeRecord('d-3'), makeRecord('d-4'), makeRecord('d-4')]))
  t.same({ a: partly.body.accepted, d: partly.body.duplicates }, { a: 1, d: 2 }, 'also within one request')
  t.same(ids(await storedRecords(dataDir)), ['d-1', 'd-2', 'd-3', 'd-4'])
})

t.test('records without metadata.id are not deduplicated', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s.close())
  const rec = makeRecord('x') as any
  delete rec.metadata.id
  for (let i = 0; i < 2; i++) t.equal((await s.post('/http/editor-audit', JSON.stringify(rec))).body.accepted, 1)
  t.equal((await storedRecords(dataDir)).length, 2)
})

t.test('concurrent deliveries of the same records store each once', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s.close())
  const batch = ndjson(Array.from({ length: 50 }, (_, i) => makeRecord(`c-${i}`)))
  const results = await Promise.all(Array.from({ length: 20 }, () => s.post('/http/editor-audit', batch)))
  t.ok(results.every((r) => r.status === 200))
  t.equal(
    results.reduce((n, r) => n + r.body.accepted, 0),
    50,
  )
  t.equal(
    results.reduce((n, r) => n + r.body.duplicates, 0),
    19 * 50,
  )
  t.equal((await storedRecords(dataDir)).length, 50)
})

t.test('the filter survives a restart', async (t) => {
  const dataDir = await tempDataDir(t)
  const batch = ndjson([makeRecord('r-1', '2026-11-20T08:00:00Z'), makeRecord('r-2', '2020-01-01T00:00:00Z')])
  const s1 = await startIngestInProcess({ dataDir, env })
  t.equal((await s1.post('/http/editor-audit', batch)).body.accepted, 2)
  await s1.close()
  const s2 = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s2.close())
  const again = await s2.post('/http/editor-audit', batch)
  t.same(
    { a: again.body.accepted, d: again.body.duplicates },
    { a: 0, d: 2 },
    'old event times count too: the window is by arrival',
  )
  t.same(ids(await storedRecords(dataDir)), ['r-1', 'r-2'])
})

t.test('an id stored longer ago than the window is stored again', async (t) => {
  const dataDir = await tempDataDir(t)
  // A data file as an earlier run would have left it, 25 hours old.
  const longAgo = new Date(Date.now() - 25 * 3600_000)
  const dir = path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2026-11-20', 'hour=08')
  await mkdir(dir, { recursive: true })
  const file = path.join(dir, 'editor-audit-20200101T000000Z-aaaaaa-000001.ndjson')
  const recent = new Date(Date.now() - 3600_000)
  const stored = (id: string, at: Date) =>
    JSON.stringify({ ...makeRecord(id), p_source_id: 'editor-audit', p_parse_time: at.toISOString() })
  await appendFile(file, `${stored('old-1', longAgo)}\n`)
  await appendFile(file, `${stored('new-1', recent)}\n`)
  await utimes(file, recent, recent)
  const s = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s.close())
  const res = await s.post('/http/editor-audit', ndjson([makeRecord('old-1'), makeRecord('new-1')]))
  t.same({ a: res.body.accepted, d: res.body.duplicates }, { a: 1, d: 1 })
})

t.test('DuplicateFilter forgets ids past the window and waits on queued ones', async (t) => {
  const f = new DuplicateFilter(1000)
  let release!: () => void
  const commit = new Promise<void>((r) => (release = r))
  f.markPending(['a'], 10_000, commit)
  const pending = f.check('a', 10_001)
  t.equal(pending.kind, 'pending')
  release()
  await commit
  await Promise.resolve()
  t.same(f.check('a', 10_500), { kind: 'stored' })
  t.same(f.check('a', 11_001), { kind: 'new' }, 'past the window')
  f.addStored('b', 10_900)
  f.prune(11_500)
  t.equal(f.size, 1, 'a pruned, b kept')
  const failing = Promise.reject(new Error('disk gone'))
  f.markPending(['c'], 11_500, failing)
  await failing.catch(() => {})
  await Promise.resolve()
  t.same(f.check('c', 11_501), { kind: 'new' }, 'a failed commit does not count as stored')
})

t.test('after a restart each source only counts its own records as duplicates', async (t) => {
  const dataDir = await tempDataDir(t)
  const opts = {
    dataDir,
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN, EU_TOKEN: 'eu-token' },
    overrides: {
      logSources: [
        {
          id: 'editor-audit',
          logType: 'Editor.Audit',
          auth: { method: 'Bearer', tokenEnv: 'RULEKEEPER_EDITOR_AUDIT_TOKEN' },
        },
        { id: 'editor-audit-eu', logType: 'Editor.Audit', auth: { method: 'Bearer', tokenEnv: 'EU_TOKEN' } },
      ],
    },
  }
  const s1 = await startIngestInProcess(opts)
  t.equal(
    (
      await s1.post('/http/editor-audit-eu', JSON.stringify(makeRecord('shared-1')), {
        authorization: 'Bearer eu-token',
      })
    ).body.accepted,
    1,
  )
  await s1.close()
  const s2 = await startIngestInProcess(opts)
  t.teardown(() => s2.close())
  t.equal(
    (await s2.post('/http/editor-audit', JSON.stringify(makeRecord('shared-1')))).body.accepted,
    1,
    'not a duplicate for editor-audit',
  )
  const eu = await s2.post('/http/editor-audit-eu', JSON.stringify(makeRecord('shared-1')), {
    authorization: 'Bearer eu-token',
  })
  t.equal(eu.body.duplicates, 1, 'still a duplicate for editor-audit-eu')
})
