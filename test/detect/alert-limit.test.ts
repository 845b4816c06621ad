// The alert limit, as Panther has (issue 27 finding 10: a rule with a unique dedup made an alert per
// record): once a rule made `alertsPerRuleHour` alerts in a clock hour, its further matches are
// stored as signals only (no alert, no delivery) until the hour ends; counted in a metric, listed
// in /status (detection.alertLimit), remembered over a restart within the hour; configurable.
// The book counts by the real clock hour (a restart's limiter reads Date.now()): run within the last
// minute of an hour, the test first waits for the hour to turn, so all of it falls in one hour.
import pino from 'pino'
import { Registry } from 'prom-client'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { alertsPerRuleHour, checkDetectionConfig } from '../../src/detect/config.js'
import { createDetectMetrics } from '../../src/detect/detect-metrics.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { RuleMeta } from '../../src/detect/grouping.js'
import { BOOK_FILE, ruleMeta, storedRecord } from './rule-meta.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const rule: RuleMeta = ruleMeta({ id: 'R.Loud' })
const quiet: RuleMeta = { ...rule, id: 'R.Quiet' }
const FILE = BOOK_FILE
const rec = storedRecord
const fields = (n: number) => ({ title: `t${n}`, dedup: `unique-${n}`, severity: 'HIGH', alertContext: {} })
const HOUR_MS = 3_600_000
/** The test's margin before an hour's end: it takes a few seconds, far less even when busy. */
const MARGIN_MS = 60_000

t.test('past the limit in an hour, matches are signals only until the hour ends', async (t) => {
  const hour = Math.floor(Date.now() / HOUR_MS)
  if ((hour + 1) * HOUR_MS - Date.now() < MARGIN_MS)
    await waitFor('the clock hour to turn', () => Math.floor(Date.now() / HOUR_MS) > hour, MARGIN_MS + 10_000, 250)
  const dir = tempDir()
  const logger = pino({ level: 'silent' })
  const registry = new Registry()
  const metrics = createDetectMetrics(registry)
  const store = await DetectionStore.open(dir, logger)
  const created: string[] = []
  const book = new AlertBook(store, {
    metrics,
    alertsPerRuleHour: 3,
    alertHook: { created: (g) => created.push(g.id), committed: () => {} },
  })
  const now = Date.now()
  for (let n = 0; n < 10; n++) book.addMatch(rec(n * 100), rule, fields(n), now)
  book.addMatch(rec(5000), quiet, fields(0), now)
  await book.commit({ logs: { [FILE]: 6000 }, records: 11 })

  t.equal(book.query({ limit: 100, ruleIds: [rule.id] }).results.length, 3, 'three alerts of the loud rule')
  t.equal(book.alertCount, 4, 'and the quiet rule still alerts')
  t.equal(created.length, 4, 'only those reach the alert hook (destinations)')
  const matches = await store.readMatches(Date.UTC(2026, 10, 20), Date.UTC(2026, 10, 20, 23), () => true)
  const loud = matches.filter((m) => m.ruleId === rule.id)
  t.equal(loud.length, 10, 'every match is stored')
  t.equal(
    loud.filter((m) => m.signal === true && m.alertId === null && m.alertLimited === true).length,
    7,
    'seven as signals',
  )
  const status = book.limiter.limited(now)
  t.equal(status.perHour, 3)
  t.same(status.rules, [{ ruleId: rule.id, alerts: 3, limitedMatches: 7 }], '/status lists the rule over its limit')
  const metric = (await registry.getSingleMetric('rulekeeper_detection_alert_limited_matches_total')?.get())?.values[0]
  t.equal(metric?.value, 7, 'the metric counts them')

  // The next hour: alerts again.
  const nextHour = (Math.floor(now / HOUR_MS) + 1) * HOUR_MS
  book.addMatch(rec(7000), rule, fields(100), nextHour)
  t.equal(book.alertCount, 5, 'a new hour, a new alert')
  t.same(book.limiter.limited(nextHour).rules, [], 'no rule over its limit in the new hour')
  await book.close()

  // A restart within the hour remembers the alerts made in it.
  const again = new AlertBook(await DetectionStore.open(dir, logger), { alertsPerRuleHour: 3 })
  again.addMatch(rec(8000), rule, fields(200), Date.now())
  t.equal(again.alertCount, 4, 'still limited after a restart in the same hour')
  await again.close()
})

t.test('the limit is configured in the detection section', async (t) => {
  t.equal(alertsPerRuleHour({}), 1000, 'Panther’s 1,000 by default')
  t.equal(alertsPerRuleHour({ detection: { alertsPerRuleHour: 50 } }), 50)
  t.same(checkDetectionConfig({ detection: { alertsPerRuleHour: 50 } }), [])
  for (const bad of [0, -1, 1.5, 'x'])
    t.match(checkDetectionConfig({ detection: { alertsPerRuleHour: bad } }), [
      { path: ['detection', 'alertsPerRuleHour'], message: /positive integer/ },
    ])
})
