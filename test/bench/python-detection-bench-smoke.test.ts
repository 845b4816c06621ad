// Smoke test of issue 28's Python detection benches (detect-python, python-ingest, python-slow-rule,
// python-memory): each runs at its smallest scale against real servers, real python3 and the real
// sandbox, and reports well-formed results (names, finite positive numbers, a ratio with its
// baseline). It does not check the targets: timings belong to `npm run bench`, not to the suite.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import detectPython from '../../bench/detect-python.bench.js'
import type { BenchModule, BenchResult } from '../../bench/lib.js'
import pythonIngest from '../../bench/python-ingest.bench.js'
import pythonMemory from '../../bench/python-memory.bench.js'
import pythonSlowRule from '../../bench/python-slow-rule.bench.js'

async function runAt(t: Test, bench: BenchModule, scale: number): Promise<BenchResult[]> {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-pydetect-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const progress: string[] = []
  const results = await bench({ progress: (m) => void progress.push(m), tmpDir, scale })
  t.ok(progress.length > 0, 'progress was reported')
  t.equal(new Set(results.map((r) => r.name)).size, results.length, 'names are unique')
  for (const r of results) {
    t.ok(r.name.length > 0 && r.target.length > 0 && r.unit.length > 0, `${r.name}: name, target, unit`)
    t.ok(Number.isFinite(r.value) && r.value >= 0, `${r.name}: value ${r.value} is finite`)
    t.type(r.pass, 'boolean')
    if (r.ratio !== undefined) {
      t.ok(Number.isFinite(r.ratio) && r.ratio >= 0, `${r.name}: ratio ${r.ratio} is finite`)
      t.ok(r.baseline && Number.isFinite(r.baseline.value), `${r.name}: a ratio comes with its baseline`)
    }
  }
  return results
}

t.test('detect-python: detection and the plain python3 process agree; the ratio is a row of its own', async (t) => {
  const results = await runAt(t, detectPython, 0.1)
  t.equal(results.length, 2)
  const ratio = results.find((r) => /vs one plain python3 process/.test(r.name))!
  t.ok(ratio.value > 0 && ratio.value === Number(ratio.ratio!.toFixed(3)), 'the ratio is the value')
  t.match(ratio.target, />= 0\.5×/)
})

t.test('python-ingest: held rate and lag with Python rules and without rules', async (t) => {
  const results = await runAt(t, pythonIngest, 0.01)
  t.equal(results.length, 2)
  const [held, lag] = results
  t.match(held!.name, /^ingest with detection held, \d+ Python rules/)
  t.ok(held!.baseline!.value > 0, 'the load without rules is held')
  t.match(held!.notes ?? '', /records accepted/)
  t.match(lag!.name, /^detection lag p99 on ingest/)
  t.ok(lag!.value > 0 && lag!.baseline!.value > 0, 'lags are measured')
})

t.test('python-slow-rule: the unrelated rule’s lag with and without the slow rule', async (t) => {
  const [r] = await runAt(t, pythonSlowRule, 0.01)
  t.match(r!.name, /unrelated Python rule's detection lag p99 beside a rule sleeping 5 s per record/)
  t.ok(r!.value > 0 && r!.baseline!.value > 0, 'a lag with and without the slow rule')
  t.match(r!.notes ?? '', /without: p50 [\d.]+ s, \d+ of \d+ missing/, 'the markers of both phases are accounted for')
})

t.test('python-memory: the server and its Python sandboxes at two rule counts', async (t) => {
  const results = await runAt(t, pythonMemory, 0.01)
  t.equal(results.length, 6, 'three rows per rule count')
  for (const r of results.filter((x) => x.name.startsWith('server process memory')))
    t.ok(r.value > 20, `${r.name}: the server's resident memory (${r.value} MiB)`)
})
