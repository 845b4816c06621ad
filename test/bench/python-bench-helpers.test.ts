// The measuring helpers of the Python detection benches: a request's detection lag from its
// acknowledgement and the checkpoint polls (offered-load.ts lagSummary: first covering poll, a
// request never covered counted at the deadline), and the process-tree memory of process-memory.ts
// (a Python child is a worker with its resident memory, another child is not).
import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { commitRate, commits, lagSummary, type OfferedRun } from '../../bench/offered-load.js'
import { treeMemory } from '../../bench/process-memory.js'

function run(acks: OfferedRun['acks'], polls: OfferedRun['polls'], deadline: number): OfferedRun {
  const accepted = acks.at(-1)?.upTo ?? 0
  return {
    seconds: 1,
    sent: acks.length,
    accepted,
    skipped: 0,
    failed: 0,
    acks,
    polls,
    start: 0,
    loadEnd: 0,
    caughtUp: null,
    deadline,
  }
}

t.test('a request’s lag runs from its acknowledgement to the first poll covering it', async (t) => {
  const s = lagSummary(
    run(
      [
        { at: 100, upTo: 100 },
        { at: 200, upTo: 200 },
        { at: 250, upTo: 300 },
      ],
      [
        { at: 50, covered: 0 },
        { at: 150, covered: 100 },
        // covers the first two, not the third, and comes after the second's acknowledgement
        { at: 240, covered: 250 },
        { at: 600, covered: 300 },
      ],
      5_000,
    ),
  )
  t.same(s.lags, [0.05, 0.04, 0.35])
  t.equal(s.uncovered, 0)
  t.equal(s.covered, 300)
  t.equal(s.p99, 0.35)
})

t.test('a poll before the acknowledgement never covers it, and an uncovered request counts its wait', async (t) => {
  const s = lagSummary(
    run(
      [
        { at: 100, upTo: 100 },
        { at: 300, upTo: 200 },
      ],
      [
        // already counts 200 records (others in flight), but comes before the first acknowledgement
        { at: 90, covered: 200 },
        { at: 400, covered: 200 },
      ],
      1_000,
    ),
  )
  t.same(s.lags, [0.3, 0.1])
  const open = lagSummary(run([{ at: 100, upTo: 100 }], [{ at: 200, covered: 50 }], 2_100))
  t.same(open.lags, [2], 'counted at the deadline')
  t.equal(open.uncovered, 1)
})

t.test('detection’s rate while behind: records between its first and last commit over the time between', async (t) => {
  const polls = [
    { at: 0, covered: 0 },
    { at: 1_000, covered: 100 },
    { at: 2_000, covered: 100 },
    { at: 11_000, covered: 5_100 },
    { at: 21_000, covered: 10_100 },
  ]
  t.same(
    commits(run([], polls, 0)).map((c) => c.covered),
    [100, 5_100, 10_100],
    'the polls where the checkpoint moved',
  )
  t.equal(commitRate(run([], polls, 0)), 500, '10,000 records in 20 s')
  t.equal(commitRate(run([], polls.slice(0, 3), 0)), null, 'one commit gives no rate')
})

t.test('the process tree: a Python child is a worker with its memory, another child is not', async (t) => {
  const py = spawn(
    'python3',
    ['-c', 'import time\nx = bytearray(32 << 20)\nprint("ready", flush=True)\ntime.sleep(60)'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  )
  const other = spawn('sleep', ['60'], { stdio: 'ignore' })
  t.teardown(() => {
    py.kill('SIGKILL')
    other.kill('SIGKILL')
  })
  await new Promise<void>((resolve) => py.stdout!.once('data', () => resolve()))
  let tree = await treeMemory(process.pid)
  while (!tree.workers.some((w) => w.pid === py.pid) || tree.others.processes < 1) {
    await sleep(20) // wait: the children's /proc entries
    tree = await treeMemory(process.pid)
  }
  const worker = tree.workers.find((w) => w.pid === py.pid)!
  t.ok(worker.rssKiB >= 32 * 1024, `the Python child's 32 MiB are resident (${worker.rssKiB} KiB)`)
  t.notOk(
    tree.workers.some((w) => w.pid === other.pid),
    'sleep is not a Python worker',
  )
  t.ok(tree.rootKiB > 0, 'the root’s own memory')
})
