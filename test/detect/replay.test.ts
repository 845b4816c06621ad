// Replay (alerts.md §3) against the live run: records POSTed through the real ingest path in
// several deliveries (out-of-order event times, thresholds, two dedup strings, a signal rule), then
// `POST /replay` and `rulekeeper replay` over the same range must give the live alerts (same ids,
// counts, times, fields); named rules (a disabled one too), an older revision, a narrower range, and
// the 400s. Nothing is stored by a replay.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'
import { runCli } from '../helpers/cli.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const env = DETECT_ENV
const cmd = (name: string, timestamp: string, extra: Record<string, unknown> = {}) =>
  commandRecord('rp', name, timestamp, extra)
const send = sendAndDetect

const rule = commandRule

/** The fields a replay must reproduce (createdAt/updatedAt are the replay's own; status is OPEN). */
const same = (a: any) => {
  // Triage (status, assignee) is the live alert's own state: a replay has none.
  const { createdAt: _c, updatedAt: _u, status: _s, assignee: _a, ...rest } = a
  return rest
}
const byId = (xs: any[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1)).map(same)

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...(await filesUnder(p)))
    else out.push(p)
  }
  return out.sort()
}

t.test('replay gives the live run’s alerts', async (t) => {
  const dataDir = tempDir('rk-replay-')
  const s = await startInProcess({ dataDir, env })
  t.teardown(() => s.close())
  await rule(s, 'R.Thr', 'thr', { threshold: 3, dedupPeriodMinutes: 30, groupBy: '- Key: user_email\n' })
  await rule(s, 'R.Each', 'each', { dedupPeriodMinutes: 10, summaryAttributes: ['user_email'] })
  await rule(s, 'R.Signal', 'each', { createAlert: false })
  await rule(s, 'R.Off', 'each', { enabled: false })
  const r1 = s.server.catalog.index.revision!

  // Several deliveries, event times out of order and across hours and days.
  const users = ['a@example.com', 'b@example.com', 'c@example.com']
  const base = Date.parse('2026-11-20T22:00:00Z')
  const times: string[] = []
  for (let i = 0; i < 120; i++) times.push(new Date(base + ((i * 7919) % 240) * 60_000 + i).toISOString())
  for (let b = 0; b < 6; b++)
    await send(
      s,
      times
        .slice(b * 20, b * 20 + 20)
        .map((ts, i) => cmd(i % 3 === 0 ? 'each' : 'thr', ts, { user_email: users[(b + i) % 3] })),
    )
  const live = (await s.request('GET', '/alerts?limit=1000')).body.results as any[]
  t.ok(live.length > 5, `${live.length} live alerts`)
  const output = await filesUnder(path.join(dataDir, 'detections'))

  const from = '2026-11-20T00:00:00Z'
  const to = '2026-11-22T00:00:00Z'
  const res = await s.request('POST', '/replay', { from, to })
  t.equal(res.status, 200, res.text)
  t.equal(res.body.records, 120)
  const each = 6 * 7 // indexes 0, 3, …, 18 of each delivery of 20
  t.equal(res.body.matches, each * 2 + (120 - each), 'R.Each and R.Signal on the `each` records, R.Thr on the rest')
  t.same(byId(res.body.alerts), byId(live), 'the same alerts: ids, counts, times, dedup, summary')

  await t.test('rulekeeper replay over the data directory gives the same (server running)', async (t) => {
    const cli = await runCli(['replay', '--from', from, '--to', to, '--json', '--data-dir', dataDir])
    t.equal(cli.code, 0, cli.stderr)
    const out = JSON.parse(cli.stdout)
    t.equal(out.records, 120)
    t.same(byId(out.alerts), byId(live))
    const human = await runCli(['replay', '--from', from, '--to', to, '--rule', 'R.Each', '--data-dir', dataDir])
    t.equal(human.code, 0, human.stderr)
    t.match(human.stdout, new RegExp(`^revision [0-9a-f]{40}: 120 records, ${each} matches, \\d+ alerts\n`))
    const bad = await runCli(['replay', '--from', 'yesterday', '--to', to, '--data-dir', dataDir])
    t.equal(bad.code, 2)
  })

  await t.test('named rules (a disabled one too), a narrower range, an older revision', async (t) => {
    const named = await s.request('POST', '/replay', { from, to, ruleIds: ['R.Off', 'R.Each'] })
    t.equal(named.status, 200)
    t.equal(named.body.matches, 2 * each)
    t.ok(named.body.alerts.some((a: any) => a.ruleId === 'R.Off'))
    t.notOk(named.body.alerts.some((a: any) => a.ruleId === 'R.Thr'))
    const narrow = await s.request('POST', '/replay', { from: '2026-11-20T23:00:00Z', to: '2026-11-21T00:00:00Z' })
    t.equal(narrow.body.records, times.filter((x) => x >= '2026-11-20T23:00' && x < '2026-11-21T00:00').length)
    // A rule change: the old revision still replays the old rule.
    const put = await s.request('PUT', '/simple-rules/R.Each', {
      ...SAMPLE_BODIES.simple('R.Each', {
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: nothing\n',
        tests: [],
      }),
    })
    t.equal(put.status, 200)
    const now = await s.request('POST', '/replay', { from, to, ruleIds: ['R.Each'] })
    t.equal(now.body.matches, 0)
    const old = await s.request('POST', '/replay', { from, to, ruleIds: ['R.Each'], revision: r1 })
    t.equal(old.body.matches, each)
    t.same(byId(old.body.alerts), byId(live.filter((a) => a.ruleId === 'R.Each')))
  })

  await t.test('bad requests are 400s; replay stores nothing', async (t) => {
    for (const body of [
      {},
      { from, to: from },
      { from: 'yesterday', to },
      { from, to, extra: 1 },
      { from, to, ruleIds: 'R.Each' },
      { from, to, ruleIds: ['No.Such.Rule'] },
      { from, to, revision: 'abc' },
      { from, to, revision: 'f'.repeat(40) },
    ]) {
      const r = await s.request('POST', '/replay', body)
      t.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`)
    }
    t.same(await filesUnder(path.join(dataDir, 'detections')), output, 'no detection file was added')
  })
})
