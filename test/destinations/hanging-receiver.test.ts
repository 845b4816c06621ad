// quality.md: "a receiver that hangs never stalls detection". One receiver accepts each request and
// never answers (its destination's timeout is 10 minutes, longer than the test), a second one is
// healthy; both get every HIGH alert. Batch after batch of alerts is detected and committed while
// the hanging lane stays full of unanswered requests and the rest of its deliveries wait behind
// them: detection reaches idle each time (it would never, were it waiting on a delivery), its lag
// is 0, and the healthy receiver gets every alert.
// Real port: a remote (the receivers; the service runs in process).
import t from 'tap'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'

const BATCHES = 8
const PER_BATCH = 5
const HANG_CONCURRENCY = 2

t.test('a hanging receiver never stalls detection nor the other destination', async (t) => {
  t.setTimeout(180_000)
  const hang: Receiver = await startReceiver(() => 'hang')
  const ok: Receiver = await startReceiver()
  t.teardown(() => Promise.all([hang.close(), ok.close()]))
  const config = {
    destinations: [
      {
        id: 'hang',
        type: 'webhook',
        url: hang.url,
        severities: ['HIGH'],
        timeoutMs: 600_000,
        concurrency: HANG_CONCURRENCY,
      },
      { id: 'ok', type: 'webhook', url: ok.url, severities: ['HIGH'] },
    ],
  }
  const s = await startInProcess({ dataDir: tempDir('rk-dest-hang-'), env: DETECT_ENV, config })
  t.teardown(() => s.close())
  await commandRule(s, 'Hang.High', 'hang', { severity: 'HIGH', groupBy: '- Key: user_email\n' })

  let n = 0
  const slowest: number[] = []
  for (let b = 0; b < BATCHES; b++) {
    const stamp = new Date(Date.UTC(2026, 10, 20, 10, 0, b)).toISOString()
    const t0 = Date.now()
    // sendAndDetect resolves once detection is idle: every record evaluated, every alert committed.
    await sendAndDetect(
      s,
      Array.from({ length: PER_BATCH }, () => commandRecord('hang', 'hang', stamp, { user_email: `h${n++}@x` })),
    )
    slowest.push(Date.now() - t0)
    const st = (await s.request('GET', '/status')).body.detection
    t.equal(st.lagSeconds, 0, `batch ${b}: detection has no lag`)
    if (b === 0) await hang.until(() => hang.got.length === HANG_CONCURRENCY, 'the hanging lane is full')
  }
  const alerts = (await s.request('GET', '/alerts?rule-id=Hang.High&limit=1000')).body.results as any[]
  t.equal(alerts.length, BATCHES * PER_BATCH, 'every alert committed while the hanging lane is full')
  t.equal(hang.got.length, HANG_CONCURRENCY, 'the hanging receiver holds its lane: no request answered, none more')
  t.ok(
    hang.got.every((r) => r.answered === 'hang'),
    'the hanging requests are still unanswered',
  )
  await ok.until(() => ok.acked().size === alerts.length, 'the healthy receiver gets every alert')
  t.same(new Set(ok.acked().keys()), new Set(alerts.map((a) => a.id)))
  const pending = alerts.filter((a) => a.destinations.find((d: any) => d.id === 'hang')?.state === 'pending')
  t.equal(pending.length, alerts.length, 'the hanging destination’s deliveries are all still pending')
  t.comment(`ingest + detection per batch: max ${Math.max(...slowest)} ms with the hanging lane full`)
})
