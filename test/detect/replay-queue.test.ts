// The fair places of POST /replay (src/detect/replay-queue.ts): one running replay per token, the
// free places given round robin over tokens (the token served longest ago first, not the oldest
// request), a bounded queue answered 503 with Retry-After and a clear message (one waiting replay
// per token too), and a waiting replay whose caller went away leaves the queue at once.
import t from 'tap'
import { isRulekeeperError } from '../../src/errors.js'
import { type ReplayPlace, ReplayQueue } from '../../src/detect/replay-queue.js'

const signal = () => new AbortController().signal
/** A promise's state after the microtasks queued so far have run. */
const settled = async (p: Promise<unknown>) => {
  let done = false
  p.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((r) => setImmediate(r))
  return done
}

t.test('a second token runs while the first holds its place; one place per token', async (t) => {
  const q = new ReplayQueue({ concurrency: 2, queue: 4 })
  const a1 = await q.acquire('A', signal())
  const a2 = q.acquire('A', signal())
  t.notOk(await settled(a2), 'the same token’s second replay waits, though a place is free')
  const b = await q.acquire('B', signal())
  t.same(q.size, { running: 2, waiting: 1 }, 'token B runs beside token A')
  b.release()
  t.notOk(await settled(a2), 'a free place does not go to a token already running')
  a1.release()
  t.ok(await settled(a2), 'A’s next replay runs once its first has ended')
  ;(await a2).release()
  t.same(q.size, { running: 0, waiting: 0 })
})

t.test('free places go round robin over tokens', async (t) => {
  const q = new ReplayQueue({ concurrency: 1, queue: 8 })
  const order: string[] = []
  const held: ReplayPlace[] = []
  const take = (token: string) =>
    q.acquire(token, signal()).then((p) => {
      order.push(token)
      held.push(p)
    })
  await take('A')
  // A asks again before B and C ask: B and C have not been served, A has.
  const all = [take('A'), take('B'), take('C')]
  for (let i = 0; i < 3; i++) {
    held.shift()!.release()
    await new Promise((r) => setImmediate(r))
    t.equal(order.length, i + 2, 'one place given per release')
  }
  await Promise.all(all)
  t.same(order, ['A', 'B', 'C', 'A'], 'B and C before A’s second replay')
  held.shift()!.release()
  t.same(q.size, { running: 0, waiting: 0 })
})

t.test('a full queue is a 503 with Retry-After; one waiting replay per token', async (t) => {
  const q = new ReplayQueue({ concurrency: 1, queue: 1 })
  const a = await q.acquire('A', signal())
  a.progress(50, 100)
  const b = q.acquire('B', signal())
  const busy = await q.acquire('C', signal()).catch((e: unknown) => e)
  t.ok(isRulekeeperError(busy), 'refused')
  if (!isRulekeeperError(busy)) return
  t.equal(busy.status, 503)
  t.match(
    busy.message,
    /^replay is busy: 1 replay is running \(at most 1 at once\) and 1 waiting \(at most 1\); retry in \d+ s$/,
  )
  const retry = Number(busy.headers?.['Retry-After'])
  t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 3600, `Retry-After ${retry}`)
  const again = await q.acquire('B', signal()).catch((e: unknown) => e)
  t.ok(isRulekeeperError(again) && /^replay is busy for this token/.test(again.message), 'B already waits')
  a.release()
  ;(await b).release()
  const none = new ReplayQueue({ concurrency: 1, queue: 0 })
  const only = await none.acquire('A', signal())
  const refused = await none.acquire('B', signal()).catch((e: unknown) => e)
  t.match(
    (refused as Error).message,
    /^replay is busy: 1 replay is running \(at most 1 at once\); retry in \d+ s$/,
    'queue 0: nothing waits',
  )
  only.release()
})

t.test('a waiting replay whose caller went away leaves the queue; release is once', async (t) => {
  const q = new ReplayQueue({ concurrency: 1, queue: 2 })
  const a = await q.acquire('A', signal())
  const gone = new AbortController()
  const b = q.acquire('B', gone.signal)
  const c = q.acquire('C', signal())
  gone.abort(new Error('the client disconnected'))
  await t.rejects(b, /the client disconnected/)
  t.same(q.size, { running: 1, waiting: 1 })
  a.release()
  a.release() // a second release frees nothing more
  const cp = await c
  t.same(q.size, { running: 1, waiting: 0 }, 'C got the place B left')
  const d = q.acquire('D', signal())
  t.notOk(await settled(d), 'the place C holds is not given twice')
  cp.release()
  ;(await d).release()
})
