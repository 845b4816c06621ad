// The one offload worker (src/offload-worker.ts) that YAML checks and rule diffs share: answers
// matched to requests by id (out of order too), a worker that dies fails every waiting request with
// WorkerLost and the next request starts a new worker, and the answers of the real users keep
// their shapes (a large YAML text checked, a large diff made, off the main thread).
import t from 'tap'
import { OffloadWorker, WorkerLost } from '../../src/offload-worker.js'
import { checkYamlOffThread } from '../../src/rules/yaml-offload.js'
import { unifiedDiffOffThread } from '../../src/service/diff-offload.js'

// The workers are unref'd (they never hold a process open); the server's sockets keep its event loop
// alive, so this test keeps its own alive the same way while it waits on them.
const alive = setInterval(() => {}, 1_000)
t.teardown(() => clearInterval(alive))

type Req = { text: string; delayMs?: number; exit?: boolean; throw?: boolean }
type Ans = { id: number; text: string }

t.test('answers are matched to their requests by id, whatever order they come back in', async (t) => {
  const w = new OffloadWorker<Req, Ans>(import.meta.url, 'echo-worker')
  const answers = await Promise.all([
    w.run({ text: 'slow', delayMs: 150 }),
    w.run({ text: 'fast', delayMs: 0 }),
    w.run({ text: 'middle', delayMs: 50 }),
  ])
  t.same(
    answers.map((a) => a.text),
    ['slow', 'fast', 'middle'],
  )
})

t.test(
  'a worker that exits fails every waiting request with WorkerLost; the next request gets a new worker',
  async (t) => {
    const w = new OffloadWorker<Req, Ans>(import.meta.url, 'echo-worker')
    const waiting = w.run({ text: 'never answered', delayMs: 5_000 })
    const killer = w.run({ text: '', exit: true })
    for (const p of [waiting, killer]) {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      )
      t.ok(err instanceof WorkerLost, 'WorkerLost')
      t.equal((err as WorkerLost).reason, 'stopped')
    }
    t.equal((await w.run({ text: 'again' })).text, 'again', 'a new worker answers')
  },
)

t.test('a worker that throws fails the waiting requests with its error message', async (t) => {
  const w = new OffloadWorker<Req, Ans>(import.meta.url, 'echo-worker')
  const err = await w.run({ text: '', throw: true }).then(
    () => null,
    (e: unknown) => e,
  )
  t.ok(err instanceof WorkerLost)
  t.match((err as WorkerLost).reason, /echo worker broke/)
  t.equal((await w.run({ text: 'after' })).text, 'after')
})

t.test('the YAML check and the rule diff answer through it as before', async (t) => {
  const big = `a: ${'x'.repeat(20_000)}\nb: [1, 2\n`
  const problems = await checkYamlOffThread(big)
  t.ok(problems.length > 0, 'the unclosed flow sequence is a problem')
  t.same(await checkYamlOffThread(`a: ${'y'.repeat(20_000)}\n`), [], 'a valid large text has none')
  const before = `${Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n')}\n`
  const after = before.replace('line 1500\n', 'line 1500 changed\n')
  const diff = await unifiedDiffOffThread('r.yml', before, after)
  t.match(diff, /^--- a\/r\.yml\n\+\+\+ b\/r\.yml\n@@ -1498,7 \+1498,7 @@/)
  t.match(diff, /\n-line 1500\n\+line 1500 changed\n/)
})
