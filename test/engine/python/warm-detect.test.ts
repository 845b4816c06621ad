// Warm detection workers (real bubblewrap, real python3): a rule that ignores the soft stop (it
// swallows the BaseException and ignores SIGALRM) is killed with its shared worker past its share,
// the rule after it runs in a fresh one, and the stubborn rule's records run in a worker of its own,
// where it is killed at its budget: its records are errors naming the budget. A worker lives across
// batches (the same process answers the next batch); the killed ones exit.
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, streamingRule } from './fixtures.js'

const rule = streamingRule

const STUBBORN = rule(
  'A.Stubborn',
  `import signal


def rule(event):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        try:
            pass
        except BaseException:
            pass
`,
)
const HEALTHY = rule('B.Healthy', 'COUNT = []\n\n\ndef rule(event):\n    COUNT.append(1)\n    return len(COUNT) == 4\n')
const events = [{ a: 1 }, { a: 2 }, { a: 3 }]

t.test('a rule that will not stop is killed at its deadline; the next rule runs in a fresh worker', async (t) => {
  // one worker for both rules: the stubborn one runs first (asked first, no strikes yet)
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 500, detection: { budgetMs: 300 } })
  t.teardown(() => python.pool.close())
  const ctx = contextWith()
  const started = Date.now()
  const [stubborn, healthy] = await Promise.all([
    python.evaluateBatch(STUBBORN, ctx, events),
    python.evaluateBatch(HEALTHY, ctx, events),
  ])
  t.ok(Date.now() - started < 10_000, 'bounded')
  t.same(stubborn, {
    results: events.map(() => ({
      error:
        "not evaluated: the rule's Python run used up its budget of 300 ms for this batch (the worker was stopped)",
    })),
  })
  t.same(healthy, { results: [null, null, null] }, 'the healthy rule ran (three records, no match yet)')
  // The next batch, the healthy rule alone: the same worker process, its module state kept.
  const next = await python.evaluateBatch(HEALTHY, ctx, [{ a: 4 }])
  t.same(next, { results: [{ functions: { detection: { output: true, error: null } } }] }, 'module state lives on')
  // The healthy rule's worker alone once the stubborn rule's own worker, killed at its budget, has
  // exited (the kill is asynchronous: polled, bounded).
  const until = Date.now() + 10_000
  while (python.pool.warmWorkers() !== 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20)) // wait: polling a condition
  t.equal(python.pool.warmWorkers(), 1)
})

// A rule's code that runs after its end frame (an object's __del__ when run_rule returns) with the
// soft stop disabled: no rule clock runs then, but the gap clock does — the worker is killed, the
// overrun is that rule's (a strike), and the rule after it runs in a fresh worker.
const LINGERING = rule(
  'A.Lingering',
  `import signal
import time


class Lingering:
    def __del__(self):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        time.sleep(1e9)


def rule(event):
    return Lingering()
`,
)

t.test('code running after a rule has ended is stopped too (the batch settles)', async (t) => {
  const python = createPythonEngine({
    command: 'python3',
    poolSize: 1,
    timeoutMs: 500,
    detection: { budgetMs: 300, quarantineAfter: 1 },
  })
  t.teardown(() => python.pool.close())
  const ctx = contextWith()
  const one = [{ a: 1 }]
  const started = Date.now()
  const [lingering, healthy] = await Promise.all([
    python.evaluateBatch(LINGERING, ctx, one),
    python.evaluateBatch(HEALTHY, ctx, one),
  ])
  t.ok(Date.now() - started < 10_000, 'bounded')
  t.ok('results' in lingering && lingering.results.length === 1, 'the lingering rule has its record answered')
  t.same(healthy, { results: [null] }, 'the healthy rule ran in a fresh worker')
  const held = python.quarantined()
  t.equal(held.length, 1, 'the lingering rule got the strike')
  t.match(held[0], { ruleId: 'A.Lingering', reason: /kept running past its end/ })
})
