// Smoke test of the Python rules benchmark (bench/python-rules.bench.ts): at a tiny scale (one
// rule per template) the synthetic repository passes every test through the real CLI, the flipped
// one fails every test, and the plain-python3 baseline agrees. Timings belong to `npm run bench`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import bench from '../../bench/python-rules.bench.js'

t.test('the Python rules bench runs at a tiny scale and reports well-formed results', async (t) => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-pyrules-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const progress: string[] = []
  const results = await bench({ progress: (m) => void progress.push(m), tmpDir, scale: 0.001 })
  t.ok(progress.length > 0, 'progress was reported')
  t.equal(results.length, 2)
  const [wall, rate] = results
  t.match(wall!.name, /^rulekeeper test, 8 Python rules, \d+ tests/, 'one rule per template')
  t.match(wall!.notes ?? '', /every test passed, and all \d+ tests of 8 rules with flipped ExpectedResult failed/)
  t.ok(Number.isFinite(wall!.value) && wall!.value > 0, 'a wall time')
  t.ok(rate!.baseline && rate!.baseline.value > 0 && Number.isFinite(rate!.ratio), 'a baseline and a ratio')
  t.match(rate!.notes ?? '', /load average/)
})
