// The share clock and late rules against rules that misbehave on purpose or by accident (the
// review's findings): a late rule given no record of a chunk holds nobody; a rule raising the
// share's own stop from its own worker is refused (a crash, then quarantined), never re-queued
// forever; a rule slow in one C call (the stop cannot interrupt it) is evicted, not struck, and
// finishes; a slow import is not cut by the share. Real ingest path, real sandbox, warm workers.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { commandRecord, DETECT_ENV, postLog } from './helpers.js'
import { ndjson } from '../ingest/helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const RECORDS = 6

async function pyRule(s: InProcessServer, id: string, body: string, extra: Record<string, unknown> = {}) {
  const res = await s.request('POST', '/rules', { ...SAMPLE_BODIES.python(id, { body, tests: [] }), ...extra })
  if (res.status !== 200) throw new Error(`rule ${id}: ${res.status} ${res.text}`)
}

const HEALTHY = 'def rule(event):\n    return event.deep_get("team_command", "command_name") == "attok"\n'

let stamp = 0
const records = (name: string) =>
  Array.from({ length: RECORDS }, () =>
    commandRecord('att', name, new Date(Date.UTC(2026, 10, 22, 9, 0, stamp++)).toISOString()),
  )

async function send(s: InProcessServer, name = 'attok') {
  const res = await postLog(s, ndjson(records(name)))
  if (res.status !== 200) throw new Error(`ingest: ${res.status}`)
}

const matches = async (s: InProcessServer, ruleId: string) =>
  (
    await s.server.detection.store.readMatches(
      Date.parse('2026-11-01T00:00:00Z'),
      Date.parse('2026-12-01T00:00:00Z'),
      (m) => m.ruleId === ruleId,
    )
  ).length
const errorsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/rule-errors?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]

/** Polls `check` every 50 ms until it holds; false after `ms`. */
async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(50) // wait: polling a condition
  }
  return check()
}

/** Resolves true when `p` settles within `ms` (the bound's timer is cleared then: it holds no process). */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  const bound = new AbortController()
  try {
    return await Promise.race([p.then(() => true), sleep(ms, false, { signal: bound.signal })]) // wait: the bound of a hang
  } finally {
    bound.abort()
  }
}

t.test('a late rule given no record of a chunk holds nobody', async (t) => {
  const s = await startInProcess({
    dataDir: tempDir('rk-late-att1-'),
    env: DETECT_ENV,
    config: { python: { timeoutMs: 3000 }, detection: { python: { budgetMs: 60_000 } } },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Att.Healthy', HEALTHY)
  // Slow only on the records its InlineFilter lets through.
  await pyRule(s, 'Py.Att.Filtered', 'import time\n\n\ndef rule(event):\n    time.sleep(1)\n    return True\n', {
    inlineFilters: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: slowonly\n',
  })
  await send(s, 'slowonly')
  t.ok(await until(async () => (await s.request('GET', '/status')).body.detection.lateRules.length === 1, 30_000))
  const started = Date.now()
  await send(s)
  t.ok(await until(async () => (await matches(s, 'Py.Att.Healthy')) === RECORDS, 30_000))
  const ms = Date.now() - started
  t.ok(
    (await matches(s, 'Py.Att.Filtered')) < RECORDS,
    `the healthy rule's matches (${ms} ms) did not wait for the filtered rule's backlog`,
  )
  await s.server.detection.detector.idle()
  t.equal(await matches(s, 'Py.Att.Filtered'), RECORDS)
})

t.test("a rule raising the share's stop in its own worker is refused, then quarantined", async (t) => {
  const s = await startInProcess({
    dataDir: tempDir('rk-late-att2-'),
    env: DETECT_ENV,
    config: { python: { timeoutMs: 2000 }, detection: { python: { quarantineAfter: 3 } } },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Att.Healthy', HEALTHY)
  await pyRule(
    s,
    'Py.Att.Forger',
    'import sys\n\n\ndef rule(event):\n    raise sys.modules["rulekeeper_serve"].StopShare()\n',
  )
  for (let k = 0; k < 4; k++) {
    await send(s)
    t.ok(await within(s.server.detection.detector.idle(), 60_000), `batch ${k}: detection settles`)
  }
  const status = (await s.request('GET', '/status')).body.detection
  t.same(
    status.quarantined.map((q: any) => q.ruleId),
    ['Py.Att.Forger'],
    'quarantined, not re-queued forever',
  )
  t.same(status.lateRules, [])
  t.equal(await matches(s, 'Py.Att.Healthy'), 4 * RECORDS)
  t.ok((await errorsOf(s, 'Py.Att.Forger')).length > 0)
})

t.test('a rule slow in one C call is evicted, not struck, and finishes; a slow import is not cut', async (t) => {
  const s = await startInProcess({
    dataDir: tempDir('rk-late-att3-'),
    env: DETECT_ENV,
    // The per-record clock (60 s, under the rule's batch budget of 120 s) must never fire: each
    // record's C call takes 1-2 s idle, several times that on a busy machine, and what is tested is
    // the share (250 ms), not the record clock.
    config: { python: { timeoutMs: 60_000 }, detection: { python: { budgetMs: 120_000 } } },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Att.Healthy', HEALTHY)
  // sum(range(n)) is one C call: the share's stop waits for it; the server kills at share + 0.5 s.
  await pyRule(s, 'Py.Att.CCall', 'def rule(event):\n    return sum(range(60_000_000)) > 0\n')
  await pyRule(s, 'Py.Att.SlowImport', 'import time\n\ntime.sleep(0.6)\n\n\ndef rule(event):\n    return True\n')
  await send(s)
  t.ok(await within(s.server.detection.detector.idle(), 120_000), 'detection settles')
  t.equal(await matches(s, 'Py.Att.CCall'), RECORDS, 'the slow C call matched every record')
  t.same(await errorsOf(s, 'Py.Att.CCall'), [], 'no errors: evicted, not struck')
  t.equal(await matches(s, 'Py.Att.SlowImport'), RECORDS, 'the slow import was not cut by the share')
  t.same(await errorsOf(s, 'Py.Att.SlowImport'), [])
  t.equal(await matches(s, 'Py.Att.Healthy'), RECORDS)
})
