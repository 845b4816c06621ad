// Smoke test of the PostgreSQL ledger bench (bench/pg-ledger.bench.ts): it runs at a tiny scale on a
// real PostgreSQL and reports both rows with their file-store baselines. Timings belong to
// `npm run bench`, not to the suite.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import bench from '../../bench/pg-ledger.bench.js'

t.test('the PostgreSQL ledger bench runs at a tiny scale and reports well-formed results', async (t) => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-pg-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const results = await bench({ progress: () => {}, tmpDir, scale: 0.05 })
  t.same(
    results.map((r) => r.name),
    [
      'commit of 1,000 matches + 100 groups, PostgreSQL vs file store',
      'commit of 1 match + 1 group, PostgreSQL vs file store',
    ],
  )
  for (const r of results) {
    t.ok(Number.isFinite(r.value) && r.value > 0, `${r.name}: ${r.value} ms`)
    t.ok(r.baseline && r.baseline.value > 0 && Number.isFinite(r.ratio), `${r.name}: against the file store`)
  }
})
