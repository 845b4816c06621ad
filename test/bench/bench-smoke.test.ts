// Smoke test of the rules API benchmark: runs bench/rules-api.bench.ts at a tiny scale against
// real servers and checks that its results are well-formed (names, finite numbers, ratios with
// baselines). It does not check the targets: timings belong to `npm run bench`, not to the suite.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import bench from '../../bench/rules-api.bench.js'
import { renderMarkdown } from '../../bench/run.js'

t.test('the rules API bench runs at a tiny scale and reports well-formed results', async (t) => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-smoke-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const progress: string[] = []
  const results = await bench({ progress: (m) => void progress.push(m), tmpDir, scale: 0.02 })
  t.ok(progress.length > 0, 'progress was reported')
  const names = results.map((r) => r.name)
  for (const want of [
    /^start-up/,
    /^write latency, median at/,
    /^write latency, median .* vs /,
    /^write throughput/,
    /^get by id/,
    /^list/,
  ]) {
    t.ok(
      names.some((n) => want.test(n)),
      `a result matches ${want}`,
    )
  }
  t.equal(new Set(names).size, names.length, 'names are unique')
  for (const r of results) {
    t.type(r.name, 'string')
    t.ok(r.name.length > 0 && r.target.length > 0 && r.unit.length > 0, `${r.name}: name, target, unit`)
    t.ok(Number.isFinite(r.value) && r.value > 0, `${r.name}: value ${r.value} is a positive finite number`)
    t.type(r.pass, 'boolean')
    if (r.ratio !== undefined) {
      t.ok(Number.isFinite(r.ratio) && r.ratio > 0, `${r.name}: ratio ${r.ratio} is finite`)
      t.ok(
        r.baseline && Number.isFinite(r.baseline.value) && r.baseline.value > 0,
        `${r.name}: a ratio comes with its baseline`,
      )
    }
  }
  const tp = results.find((r) => r.name.startsWith('write throughput'))!
  t.match(tp.notes ?? '', /, equal/, 'every acknowledged write is one commit')
  const md = renderMarkdown({
    date: new Date().toISOString(),
    machine: { nproc: 2, cpus: 'test', node: process.version, platform: 'test', loadavg: [0, 0, 0] },
    scale: 0.02,
    filter: [],
    modules: [
      { module: 'rules-api', date: new Date().toISOString(), scale: 0.02, seconds: 1, results },
      {
        module: 'broken',
        date: new Date().toISOString(),
        scale: 0.02,
        seconds: 0,
        results: [],
        error: 'Error: boom\n    at somewhere',
      },
    ],
  })
  t.equal(
    md.split('\n').filter((l) => l.startsWith('| rules-api |')).length,
    results.length,
    'one table row per result',
  )
  t.match(md, /\| broken \| \(module failed\) .*boom/, 'a failed module is a row with its error')
})
