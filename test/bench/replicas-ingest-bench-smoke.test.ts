// Smoke test of the replicas ingest bench (bench/replicas-ingest.bench.ts): at a tiny scale it starts
// 1, 2 and 3 child servers over one real PostgreSQL, loads them, and reports for each count the
// records/s held (with the ratio to one replica), the CPU per 1,000 records and the worst detection
// lag, every number finite and sane. The numbers themselves belong to `npm run bench`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import bench from '../../bench/replicas-ingest.bench.js'

t.test('the replicas ingest bench runs at a tiny scale and reports well-formed rows', async (t) => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-bench-replicas-'))
  t.teardown(() => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const progress: string[] = []
  const results = await bench({ progress: (m) => void progress.push(m), tmpDir, scale: 0.01 })
  t.ok(
    progress.some((m) => m.includes('3 replica(s)')),
    'the three-replica phase ran',
  )
  const names = results.map((r) => r.name)
  t.equal(new Set(names).size, names.length, 'names are unique')
  for (const [n, label] of [
    [1, '1 replica'],
    [2, '2 replicas'],
    [3, '3 replicas'],
  ] as const) {
    const held = results.find((r) => r.name.includes(`, ${label} over one PostgreSQL`))
    const cpu = results.find((r) => r.name.includes(`per 1,000 records, ${label} `))
    const lag = results.find((r) => r.name.endsWith(`worst of ${label}`))
    t.ok(held && cpu && lag, `three rows for ${label}`)
    t.ok(held!.value > 0 && held!.pass, `${label}: ${held!.value} records/s held, no errors`)
    t.ok(cpu!.value > 0 && cpu!.value < 10, `${label}: ${cpu!.value} CPU-s per 1,000 records`)
    t.match(cpu!.notes, /PostgreSQL \(postmaster and its backends\) \d+\.\d CPU-s/, `${label}: PostgreSQL's CPU apart`)
    t.ok(lag!.value > 0 && Number.isFinite(lag!.value), `${label}: lag p99 ${lag!.value} s`)
    t.match(
      held!.notes,
      new RegExp(`\\(${Array(n).fill('\\d+').join(' / ')} per replica\\)`),
      'every replica took records',
    )
    t.notMatch(held!.notes, /\b0 \/|\/ 0 /, 'no replica was left without records')
    if (n === 1) t.equal(held!.ratio, undefined, 'one replica is the baseline')
    else {
      t.ok(Number.isFinite(held!.ratio) && held!.ratio! > 0, `${label}: ratio to one replica ${held!.ratio}`)
      t.equal(held!.baseline?.name, 'one replica')
      t.ok(Number.isFinite(cpu!.ratio) && cpu!.ratio! > 0, `${label}: CPU ratio ${cpu!.ratio}`)
    }
  }
})
