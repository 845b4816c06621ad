// A slow, a looping and a crashing Python rule beside a healthy one, through the real ingest path
// (real server in process, the real bubblewrap sandbox, real python3, warm workers): each bad rule is
// stopped at its budget or clock, its unfinished records are rule errors, it is quarantined after
// `detection.python.quarantineAfter` batches in a row (`/status`, the metrics, a rule error) and
// lifted by a change to it; the healthy rule's alerts keep arriving within a bound of its lag
// measured without the bad rules, and once the bad rules are quarantined, within its normal lag.
import t from 'tap'
import { commandRecord, DETECT_ENV, sendAndDetect } from './helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const TIMEOUT_MS = 1000
const BUDGET_MS = 300
const RECORDS = 10

async function pyRule(s: InProcessServer, id: string, body: string, method = 'POST') {
  // A PUT changes the body alone: a new revision of the rule's .py is a change to it.
  const res = await s.request(method, method === 'POST' ? '/rules' : `/rules/${id}`, {
    ...SAMPLE_BODIES.python(id, { body, tests: [] }),
  })
  if (res.status !== 200) throw new Error(`rule ${id}: ${res.status} ${res.text}`)
}

const matchCommand = (name: string) =>
  `def rule(event):\n    return event.deep_get("team_command", "command_name") == ${JSON.stringify(name)}\n`

const SLOW = `import time


def rule(event):
    time.sleep(0.3)
    return True
`
const LOOPS = 'def rule(event):\n    while True:\n        pass\n'
const CRASHES = `import os


def rule(event):
    os._exit(3)
`

let stamp = 0
const batch = () =>
  Array.from({ length: RECORDS }, () =>
    commandRecord('bud', 'pyok', new Date(Date.UTC(2026, 10, 20, 14, 0, stamp++)).toISOString()),
  )

/** The wall time of one ingest until detection is idle: the healthy rule's alerts exist then. */
async function lag(s: InProcessServer): Promise<number> {
  const started = performance.now()
  await sendAndDetect(s, batch())
  return performance.now() - started
}

const errorsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/rule-errors?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]
const matchCount = async (s: InProcessServer, ruleId: string) =>
  (
    await s.server.detection.store.readMatches(
      Date.parse('2026-11-01T00:00:00Z'),
      Date.parse('2026-12-01T00:00:00Z'),
      (m) => m.ruleId === ruleId,
    )
  ).length

t.test('bad Python rules are stopped, reported and quarantined; the healthy rule keeps its lag', async (t) => {
  const s = await startInProcess({
    dataDir: tempDir('rk-pybudget-'),
    env: DETECT_ENV,
    config: {
      python: { timeoutMs: TIMEOUT_MS },
      detection: { python: { budgetMs: BUDGET_MS, budgetMsPerRecord: 1, quarantineAfter: 3 } },
    },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Healthy', matchCommand('pyok'))
  await lag(s) // the workers start
  const normal = Math.max(await lag(s), await lag(s))
  t.equal(await matchCount(s, 'Py.Healthy'), 3 * RECORDS)

  await pyRule(s, 'Py.Slow', SLOW)
  await pyRule(s, 'Py.Loops', LOOPS)
  await pyRule(s, 'Py.Crashes', CRASHES)
  // A batch with a looping rule costs it at most 3 stopped records (its clock each) and its budget;
  // the slow one its budget plus one record; the crashing one a few fresh sandboxes.
  const strikeBound = normal + 3 * TIMEOUT_MS + BUDGET_MS + 3000
  for (let k = 1; k <= 3; k++) {
    const ms = await lag(s)
    t.ok(ms < strikeBound, `batch ${k} with the bad rules took ${Math.round(ms)} ms (< ${Math.round(strikeBound)})`)
    t.equal(await matchCount(s, 'Py.Healthy'), (3 + k) * RECORDS, 'the healthy rule matched every record')
  }
  const slow = await errorsOf(s, 'Py.Slow')
  t.ok(
    slow.some((e) => /^not evaluated: the rule's Python run used up its budget of 300 ms for this batch/.test(e.error)),
    'the slow rule ran out of budget',
  )
  t.ok(slow.length <= 3 * RECORDS, 'at most one error per record')
  t.ok((await matchCount(s, 'Py.Slow')) < 3 * RECORDS, 'the slow rule did not finish its batches')
  const loops = await errorsOf(s, 'Py.Loops')
  t.ok(
    loops.some((e) => /stopped: timed out after 1000 ms/.test(e.error)),
    'the looping rule was stopped at its clock',
  )
  t.ok(loops.some((e) => /^not evaluated: the rule stopped its Python run 3 times in this batch/.test(e.error)))
  const crashes = await errorsOf(s, 'Py.Crashes')
  t.ok(
    crashes.some((e) => /stopped: exited with code 3/.test(e.error)),
    'the crash is reported at its record',
  )

  const status = (await s.request('GET', '/status')).body
  t.same(
    status.detection.quarantined.map((q: any) => q.ruleId),
    ['Py.Crashes', 'Py.Loops', 'Py.Slow'],
    '/status lists the quarantined rules',
  )
  for (const q of status.detection.quarantined) {
    t.match(q.reason, /^stopped in 3 detection batches in a row \(last: .+\)$/)
    t.ok(!Number.isNaN(Date.parse(q.since)))
  }
  const metrics = (await s.send('GET', '/metrics')).text
  t.match(metrics, /^rulekeeper_detection_rules_quarantined 3$/m)
  t.match(metrics, /^rulekeeper_detection_rule_overruns_total\{kind="budget"\} [1-9]/m)
  t.match(metrics, /^rulekeeper_detection_rule_overruns_total\{kind="crashed"\} [1-9]/m)
  t.notMatch(metrics, /Py\.(Slow|Loops|Crashes)/, 'no rule ids in the metrics')

  // Quarantined: not evaluated (one rule error each, no record), and the healthy rule's lag is back.
  const after = await lag(s)
  t.ok(
    after < 2 * normal + 1000,
    `with the bad rules quarantined: ${Math.round(after)} ms (normal ${Math.round(normal)} ms)`,
  )
  t.equal(await matchCount(s, 'Py.Healthy'), 7 * RECORDS)
  for (const id of ['Py.Slow', 'Py.Loops', 'Py.Crashes']) {
    const last = (await errorsOf(s, id)).filter((e) => /quarantined/.test(e.error))
    t.equal(last.length, 1, `${id}: one rule error for its quarantine`)
    t.equal(last[0]?.record, null)
    t.match(last[0]?.error, /^not evaluated: the rule is quarantined since .+; a change to the rule lifts it$/)
  }

  // A change to the rule (a new revision of its file) lifts its quarantine.
  await pyRule(s, 'Py.Loops', matchCommand('pyok'), 'PUT')
  const lifted = (await s.request('GET', '/status')).body.detection.quarantined.map((q: any) => q.ruleId)
  t.same(lifted, ['Py.Crashes', 'Py.Slow'], 'the changed rule is no longer quarantined')
  const before = await matchCount(s, 'Py.Loops')
  await lag(s)
  t.equal((await matchCount(s, 'Py.Loops')) - before, RECORDS, 'the changed rule runs again')
})
