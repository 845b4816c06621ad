// Attacks on POST /replay on a real server with a real stored log and real Python rules in the
// sandboxed pool: many replays at once (each reads the stored log and takes Python workers from live
// detection; one token cannot hold every place, issue 27 finding 8), clients that go away mid-replay
// (their reader and Python runs must stop, freeing their place), times that do not exist (Feb 30,
// 24:00, offsets past 23:59) and a range of ten thousand years over the whole stored log.
// Real port: slow or hanging clients (clients that go away mid-replay).
import t from 'tap'
import { commandRecord, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { httpRequest, SAMPLE_BODIES, startTestServer, tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

t.test('POST /replay under attack', async (t) => {
  const s = await startTestServer({
    dataDir: tempDir('rk-replay-attack-'),
    env: DETECT_ENV,
    // two replays at once and one waiting, so a fourth is the one refused
    config: { python: { timeoutMs: 10_000, poolSize: 2 }, detection: { replay: { concurrency: 2, queue: 1 } } },
  })
  t.teardown(() => s.close())
  // A Python rule that takes 1 s per record: a replay of it over 6 records takes about 6 s.
  const slow = await s.request('POST', '/rules', {
    ...SAMPLE_BODIES.python('Rp.Slow', {
      body: 'import time\n\n\ndef rule(event):\n    time.sleep(1)\n    return True\n',
      tests: [],
    }),
    enabled: false, // replay only: live detection does not run it
  })
  t.equal(slow.status, 200, slow.text)
  const fast = await s.request('POST', '/rules', {
    ...SAMPLE_BODIES.python('Rp.Fast', { body: 'def rule(event):\n    return True\n', tests: [] }),
    enabled: false,
  })
  t.equal(fast.status, 200, fast.text)
  await sendAndDetect(
    s,
    Array.from({ length: 6 }, (_, i) => commandRecord('rp', 'x', `2026-11-20T10:00:0${i}Z`)),
  )
  const range = { from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' }
  const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((k) => s.makeToken(`replayer-${k}`, ['View Rules'])))
  const replayOf = (ruleIds: string[], signal?: AbortSignal, token = s.token) =>
    fetch(`${s.url}/replay`, {
      method: 'POST',
      headers: { 'X-API-Key': token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...range, ruleIds }),
      signal,
    })
  const queue = s.server.detection.replays.queue
  /** Waits (bounded) until the replay places are as given. */
  const placesAre = async (want: { running: number; waiting: number }) => {
    await waitFor('replay places', () => JSON.stringify(queue.size) === JSON.stringify(want), 10_000, 25).catch(
      () => {},
    )
    return queue.size
  }

  await t.test('two run, one waits, a fourth is a 503 with Retry-After; the three finish', async (t) => {
    const first = [replayOf(['Rp.Slow'], undefined, a), replayOf(['Rp.Slow'], undefined, b)]
    t.same(await placesAre({ running: 2, waiting: 0 }), { running: 2, waiting: 0 })
    const third = replayOf(['Rp.Fast'], undefined, c)
    t.same(await placesAre({ running: 2, waiting: 1 }), { running: 2, waiting: 1 }, 'the third waits')
    const fourth = await replayOf(['Rp.Fast'], undefined, d)
    t.equal(fourth.status, 503)
    t.ok(Number(fourth.headers.get('retry-after')) > 0, 'Retry-After')
    t.match((await fourth.json()).message, /at most 2 at once\) and 1 waiting \(at most 1\)/)
    for (const res of await Promise.all([...first, third])) {
      t.equal(res.status, 200)
      t.equal((await res.json()).matches, 6)
    }
    t.equal((await replayOf(['Rp.Fast'])).status, 200, 'a place is free again')
  })

  await t.test('one token cannot hold every place: another token’s replay runs meanwhile', async (t) => {
    let firstDone = false
    const held = [replayOf(['Rp.Slow'], undefined, a), replayOf(['Rp.Slow'], undefined, a)]
    held[0]!.then(() => (firstDone = true))
    t.same(await placesAre({ running: 1, waiting: 1 }), { running: 1, waiting: 1 }, 'token a: one runs, one waits')
    const other = await replayOf(['Rp.Fast'], undefined, b)
    t.equal(other.status, 200, 'token b was not refused')
    t.equal((await other.json()).matches, 6)
    t.notOk(firstDone, 'while token a’s first replay still ran')
    for (const res of await Promise.all(held)) {
      t.equal(res.status, 200)
      t.equal((await res.json()).matches, 6)
    }
  })

  await t.test('clients that go away free their places at once (their Python runs are stopped)', async (t) => {
    const controllers = [new AbortController(), new AbortController()]
    const gone = controllers.map((ac, i) => replayOf(['Rp.Slow'], ac.signal, [a, b][i]).catch(() => 'aborted'))
    t.same(await placesAre({ running: 2, waiting: 0 }), { running: 2, waiting: 0 })
    const started = Date.now()
    for (const c of controllers) c.abort() // the clients go away mid-replay
    t.same(await Promise.all(gone), ['aborted', 'aborted'])
    // A place is released once its replay's run has stopped (its reader and its Python evaluation):
    // timed is that, not a new replay (which may start fresh sandboxes).
    t.same(await placesAre({ running: 0, waiting: 0 }), { running: 0, waiting: 0 }, 'both places are free')
    const ms = Date.now() - started
    t.ok(ms < 2500, `both places were free ${ms} ms after the clients left, not after their 6 s replays`)
    const res = await replayOf(['Rp.Fast'])
    t.equal(res.status, 200, 'the next replay runs')
    t.equal((await res.json()).matches, 6)
  })

  await t.test('times that do not exist are 400s; ten thousand years read the whole log', async (t) => {
    for (const [what, from] of [
      ['February 30', '2026-02-30T00:00:00Z'],
      ['hour 24', '2026-11-20T24:00:00Z'],
      ['month 13', '2026-13-01T00:00:00Z'],
      ['an offset of 99:99', '2026-11-20T00:00:00+99:99'],
      ['day 0', '2026-11-00T00:00:00Z'],
    ]) {
      const r = await httpRequest(s.url, 'POST', '/replay', { from, to: range.to }, { 'X-API-Key': s.token })
      t.equal(r.status, 400, what!)
      t.match(r.text, /from must be an RFC 3339 time/)
    }
    const leap = await s.request('POST', '/replay', {
      from: '2024-02-29T00:00:00Z',
      to: range.to,
      ruleIds: ['Rp.Fast'],
    })
    t.equal(leap.status, 200, 'February 29 of a leap year is a day')
    const all = await s.request('POST', '/replay', {
      from: '0000-01-01T00:00:00Z',
      to: '9999-12-31T23:59:59Z',
      ruleIds: ['Rp.Fast'],
    })
    t.equal(all.status, 200, all.text)
    t.equal(all.body.matches, 6, 'every stored record, once')
  })
})
