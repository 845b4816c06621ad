// Smoke test of bench/destinations.bench.ts at a tiny scale (real receivers, real servers): its three
// results are well-formed (finite positive values, each ratio with its same-run baseline). Targets
// are not checked: timings belong to `npm run bench`, not to the suite.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import bench from '../../bench/destinations.bench.js'

t.test('the destinations bench runs at a tiny scale and reports well-formed results', async (t) => {
  t.setTimeout(300_000)
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-dest-smoke-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const results = await bench({ progress: () => {}, tmpDir, scale: 0.01 })
  t.same(
    results.map((r) => r.name.split(',')[0]),
    [
      'deliveries/s',
      'detection lag p99 while one destination hangs',
      "healthy destination's delivery latency p99 while another hangs",
    ],
  )
  for (const r of results) {
    t.ok(Number.isFinite(r.value) && r.value > 0, `${r.name}: value ${r.value}`)
    t.ok(r.baseline && Number.isFinite(r.baseline.value) && r.baseline.value > 0, `${r.name}: a baseline`)
    t.ok(r.ratio !== undefined && Number.isFinite(r.ratio) && r.ratio > 0, `${r.name}: ratio ${r.ratio}`)
    t.type(r.pass, 'boolean')
  }
  t.match(results[1]!.notes ?? '', /\b[1-9]\d* requests left hanging/, 'the hanging destination did hang')
})
