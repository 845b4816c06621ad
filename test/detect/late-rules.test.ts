// A commit cursor per rule (late-rules.ts), through the real ingest path (in process, the real
// bubblewrap sandbox, real python3, warm workers): a Python rule that holds its shared worker past
// its share is evicted to a worker of its own and is late; the healthy rule's matches are committed
// without waiting for it, /status and the checkpoint name what the late rule owes, and its answers
// are committed when they come. A restart while a rule is late evaluates the records it owed again,
// for it alone: no match lost, none written twice.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { commandRecord, DETECT_ENV, postLog } from './helpers.js'
import { ndjson } from '../ingest/helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const RECORDS = 6
const SLEEP_S = 1

const config = {
  python: { timeoutMs: 3000 },
  detection: { python: { budgetMs: 30_000, quarantineAfter: 3 } },
}

async function pyRule(s: InProcessServer, id: string, body: string) {
  const res = await s.request('POST', '/rules', { ...SAMPLE_BODIES.python(id, { body, tests: [] }) })
  if (res.status !== 200) throw new Error(`rule ${id}: ${res.status} ${res.text}`)
}

const HEALTHY = 'def rule(event):\n    return event.deep_get("team_command", "command_name") == "lateok"\n'
/** Sleeps on every record until `until` (epoch seconds), then is quick; matches every record. */
const slow = (until: number) => `import time


def rule(event):
    if time.time() < ${until}:
        time.sleep(${SLEEP_S})
    return True
`

let stamp = 0
const batch = () =>
  Array.from({ length: RECORDS }, () =>
    commandRecord('late', 'lateok', new Date(Date.UTC(2026, 10, 21, 9, 0, stamp++)).toISOString()),
  )

async function send(s: InProcessServer) {
  const res = await postLog(s, ndjson(batch()))
  if (res.status !== 200) throw new Error(`ingest: ${res.status}`)
}

/** The committed matches of a rule (record locations), read from the store. */
const matchesOf = async (s: InProcessServer, ruleId: string) =>
  (
    await s.server.detection.store.readMatches(
      Date.parse('2026-11-01T00:00:00Z'),
      Date.parse('2026-12-01T00:00:00Z'),
      (m) => m.ruleId === ruleId,
    )
  ).map((m: any) => `${m.record.partition}@${m.record.offset}`)

const checkpoint = (dataDir: string) =>
  JSON.parse(readFileSync(path.join(dataDir, 'detections', 'checkpoint.json'), 'utf8'))

/** Polls `check` every 50 ms until it holds; false after `ms`. */
async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(50) // wait: polling a condition
  }
  return check()
}

t.test('a slow rule is late: the healthy rule is committed without it, the slow one when it answers', async (t) => {
  const dataDir = tempDir('rk-late-')
  const s = await startInProcess({ dataDir, env: DETECT_ENV, config })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Late.Healthy', HEALTHY)
  await pyRule(s, 'Py.Late.Slow', slow(Date.now() / 1000 + 3600))
  const started = Date.now()
  await send(s)
  t.ok(await until(async () => (await matchesOf(s, 'Py.Late.Healthy')).length === RECORDS, 60_000))
  const healthyMs = Date.now() - started
  const slowSoFar = (await matchesOf(s, 'Py.Late.Slow')).length
  t.ok(
    slowSoFar < RECORDS,
    `the healthy rule's ${RECORDS} matches were committed before the slow rule's (${slowSoFar})`,
  )
  const late = (await s.request('GET', '/status')).body.detection.lateRules
  t.same(
    late.map((l: any) => l.ruleId),
    ['Py.Late.Slow'],
    '/status names the late rule',
  )
  t.ok(late[0].records > 0 && !Number.isNaN(Date.parse(late[0].since)))
  const behind = checkpoint(dataDir).behind
  t.same(Object.keys(behind ?? {}), ['Py.Late.Slow'], 'the checkpoint names what the late rule owes')
  t.ok(Object.keys(behind['Py.Late.Slow'].logs).length > 0)

  await s.server.detection.detector.idle()
  const all = await matchesOf(s, 'Py.Late.Slow')
  t.equal(all.length, RECORDS, 'the late rule matched every record once')
  t.equal(new Set(all).size, RECORDS)
  t.ok(Date.now() - started >= RECORDS * SLEEP_S * 1000 - 500, 'the slow rule took its time')
  t.ok(healthyMs < RECORDS * SLEEP_S * 1000, `the healthy rule's matches came in ${healthyMs} ms`)
  t.same((await s.request('GET', '/status')).body.detection.lateRules, [], 'no rule is late any more')
  t.equal(checkpoint(dataDir).behind, undefined, 'the checkpoint owes nothing')
  const errors = (await s.request('GET', '/rule-errors?rule-id=Py.Late.Slow')).body.results
  t.same(errors, [], 'an evicted rule is not in error (it was slow, not wrong)')
})

t.test('a restart while a rule is late evaluates what it owed, for it alone', async (t) => {
  const dataDir = tempDir('rk-late-restart-')
  const first = await startInProcess({ dataDir, env: DETECT_ENV, config })
  let closed = false
  t.teardown(() => (closed ? undefined : first.close()))
  const quickAt = Date.now() / 1000 + 8
  await pyRule(first, 'Py.Late.Healthy', HEALTHY)
  await pyRule(first, 'Py.Late.Slow', slow(quickAt))
  await send(first)
  t.ok(
    await until(
      async () =>
        (await matchesOf(first, 'Py.Late.Healthy')).length === RECORDS &&
        checkpoint(dataDir).behind?.['Py.Late.Slow'] !== undefined,
      60_000,
    ),
    'the healthy rule committed, the slow one owes',
  )
  t.ok((await matchesOf(first, 'Py.Late.Slow')).length < RECORDS)
  await first.close()
  closed = true
  // wait: the slow rule is quick only from its deadline on (a time written into its code)
  while (Date.now() / 1000 < quickAt) await sleep(100)

  const again = await startInProcess({ dataDir, env: DETECT_ENV, config })
  t.teardown(() => again.close())
  await again.server.detection.detector.idle()
  const healthy = await matchesOf(again, 'Py.Late.Healthy')
  const late = await matchesOf(again, 'Py.Late.Slow')
  t.equal(healthy.length, RECORDS, 'the healthy rule was not evaluated again')
  t.equal(late.length, RECORDS, 'the late rule matched every record it owed')
  t.equal(new Set(late).size, RECORDS, 'none twice')
  t.equal(checkpoint(dataDir).behind, undefined, 'nothing owed after the catch-up')
})

t.test(
  'a restart on another revision evaluates what a late rule owed with the rule served now, and says so',
  async (t) => {
    const dataDir = tempDir('rk-late-revision-')
    const first = await startInProcess({ dataDir, env: DETECT_ENV, config })
    let closed = false
    t.teardown(() => (closed ? undefined : first.close()))
    await pyRule(first, 'Py.Late.Healthy', HEALTHY)
    // 2.5 s a record (under the 3 s clock): the version late at the first revision does not answer
    // before the close
    await pyRule(first, 'Py.Late.Slow', 'import time\n\n\ndef rule(event):\n    time.sleep(2.5)\n    return True\n')
    await send(first)
    t.ok(
      await until(
        async () =>
          (await matchesOf(first, 'Py.Late.Healthy')).length === RECORDS &&
          checkpoint(dataDir).behind?.['Py.Late.Slow'] !== undefined,
        60_000,
      ),
      'the healthy rule committed, the slow one owes',
    )
    const { revision: lateAt, since } = checkpoint(dataDir).behind['Py.Late.Slow']
    // A new version of the late rule (quick, and it titles its matches): a new revision.
    const quick = 'def rule(event):\n    return True\n\n\ndef title(event):\n    return "version 2"\n'
    const put = await first.request(
      'PUT',
      '/rules/Py.Late.Slow',
      SAMPLE_BODIES.python('Py.Late.Slow', { body: quick, tests: [] }),
    )
    t.equal(put.status, 200, put.text)
    await first.close()
    closed = true
    t.equal(checkpoint(dataDir).behind['Py.Late.Slow'].revision, lateAt, 'the debt names the revision it was late at')

    const again = await startInProcess({ dataDir, env: DETECT_ENV, config })
    t.teardown(() => again.close())
    await again.server.detection.detector.idle()
    const served = (await again.request('GET', '/status')).body.lastAppliedRevision
    t.not(served, lateAt, 'restarted on another revision')
    const late = await matchesOf(again, 'Py.Late.Slow')
    t.equal(new Set(late).size, RECORDS, 'the records it owed, evaluated once each (by the version served now)')
    t.equal(checkpoint(dataDir).behind, undefined, 'nothing owed after the catch-up')
    const errors = (await again.request('GET', '/rule-errors?rule-id=Py.Late.Slow')).body.results
    t.match(errors, [
      {
        ruleId: 'Py.Late.Slow',
        record: null,
        error: `the records this rule owed since ${since} (late at revision ${lateAt}) are evaluated with the rule as it is at revision ${served}`,
      },
    ])
    t.equal(errors.length, 1, 'said once')
  },
)

t.test('beside a slow, a looping and a crashing rule, the healthy rule keeps its lag', async (t) => {
  const s = await startInProcess({
    dataDir: tempDir('rk-late-bad-'),
    env: DETECT_ENV,
    config: { python: { timeoutMs: 2000 }, detection: { python: { quarantineAfter: 3 } } },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Py.Late.Healthy', HEALTHY)
  /** Sends a batch; the time until the healthy rule's matches of it are committed. */
  const healthyLag = async () => {
    const want = (await matchesOf(s, 'Py.Late.Healthy')).length + RECORDS
    const started = Date.now()
    await send(s)
    t.ok(await until(async () => (await matchesOf(s, 'Py.Late.Healthy')).length === want, 60_000))
    return Date.now() - started
  }
  await healthyLag() // the workers start
  await s.server.detection.detector.idle()
  const normal = Math.max(await healthyLag(), await healthyLag())
  await pyRule(s, 'Py.Late.Sleeps', 'import time\n\n\ndef rule(event):\n    time.sleep(3)\n    return True\n')
  await pyRule(s, 'Py.Late.Loops', 'def rule(event):\n    while True:\n        pass\n')
  await pyRule(s, 'Py.Late.Crashes', 'import os\n\n\ndef rule(event):\n    os._exit(3)\n')
  // Before: every batch waited for the bad rules' 3 stopped records (3 × 2 s) or their crash runs.
  const bound = normal + 3000
  for (let k = 1; k <= 4; k++) {
    const ms = await healthyLag()
    t.ok(ms < bound, `batch ${k}: the healthy rule's matches in ${ms} ms (normal ${normal} ms, bound ${bound})`)
  }
  await s.server.detection.detector.idle()
  const status = (await s.request('GET', '/status')).body.detection
  t.same(
    status.quarantined.map((q: any) => q.ruleId),
    ['Py.Late.Crashes', 'Py.Late.Loops', 'Py.Late.Sleeps'],
    'the bad rules are quarantined',
  )
  t.same(status.lateRules, [], 'and owe nothing')
  t.equal((await matchesOf(s, 'Py.Late.Healthy')).length, 7 * RECORDS, 'the healthy rule matched every record once')
})
