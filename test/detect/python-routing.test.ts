// Routing of Python rules' alerts through the real path (alerts.md §4, Panther's order): records
// POSTed to a real server, Python rules evaluated in the sandboxed pool, alerts routed and delivered
// to real receivers on 127.0.0.1. destinations() returning a list wins over OutputIds; [] and "SKIP"
// route nowhere; None, a destinations() that raises, or none at all leave it to OutputIds, then to
// the severity subscriptions.
// Real port: a remote (the receivers; the service runs in process).
import t from 'tap'
import { commandRecord, DETECT_ENV, sendAndDetect } from './helpers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const matchCommand = (name: string) =>
  `def rule(event):\n    return event.deep_get("team_command", "command_name") == ${JSON.stringify(name)}\n`

t.test('Python rules: destinations() routes in Panther’s order', async (t) => {
  const rx = { x: await startReceiver(), high: await startReceiver(), outputs: await startReceiver() } satisfies Record<
    string,
    Receiver
  >
  t.teardown(() => Promise.all(Object.values(rx).map((r) => r.close())))
  const config = {
    destinations: [
      { id: 'dest-x', type: 'webhook', url: rx.x.url, severities: [] },
      { id: 'sev-high', type: 'webhook', url: rx.high.url, severities: ['HIGH'] },
      { id: 'outputs', type: 'webhook', url: rx.outputs.url, severities: [] },
    ],
    delivery: { attempts: 3, firstDelayMs: 40, maxDelayMs: 200, budgetMinutes: 1, timeoutMs: 2000 },
  }
  const s: InProcessServer = await startInProcess({ dataDir: tempDir('rk-pyroute-'), env: DETECT_ENV, config })
  t.teardown(() => s.close())

  const rules: Array<[id: string, destinations: string | null, outputIds: string[]]> = [
    ['Py.Dest.List', 'return ["dest-x"]', ['outputs']],
    ['Py.Dest.Empty', 'return []', ['outputs']],
    ['Py.Dest.Skip', 'return "SKIP"', []],
    ['Py.Dest.None', 'return None', ['outputs']],
    ['Py.Dest.Raises', 'raise RuntimeError("no routing table")', []],
    ['Py.Dest.Absent', null, []],
  ]
  for (const [id, destinations, outputIds] of rules) {
    const name = id.toLowerCase()
    const body = `${matchCommand(name)}${destinations === null ? '' : `\n\ndef destinations(event):\n    ${destinations}\n`}`
    // A unit test expecting a match: destinations() returning "SKIP" (or []) is valid, not an error.
    const test = { name: 'matches', expectedResult: true, log: { team_command: { command_name: name } } }
    const res = await s.request('POST', '/rules', {
      ...SAMPLE_BODIES.python(id, { body, tests: id === 'Py.Dest.Raises' ? [] : [test] }),
      severity: 'HIGH',
      outputIDs: outputIds,
    })
    t.equal(res.status, 200, res.status === 200 ? `${id} saved, its unit test passing` : res.text)
  }
  await sendAndDetect(
    s,
    rules.map(([id], i) => commandRecord('route', id.toLowerCase(), `2026-11-20T09:0${i}:00Z`)),
  )
  const alertOf = async (id: string) => {
    const list = (await s.request('GET', `/alerts?rule-id=${id}`)).body.results as any[]
    t.equal(list.length, 1, `one alert of ${id}`)
    return list[0]
  }
  const routed = async (id: string) => (await alertOf(id)).destinations.map((d: any) => d.id)

  t.same(await routed('Py.Dest.List'), ['dest-x'], 'a list from destinations() over OutputIds')
  t.same(await routed('Py.Dest.Empty'), [], '[] routes nowhere')
  t.same(await routed('Py.Dest.Skip'), [], '"SKIP" routes nowhere')
  t.same(await routed('Py.Dest.None'), ['outputs'], 'None is not set: OutputIds')
  t.same(await routed('Py.Dest.Raises'), ['sev-high'], 'a destinations() that raised is not set: severity')
  t.same(await routed('Py.Dest.Absent'), ['sev-high'], 'no destinations(), no OutputIds: severity')
  const errors = (await s.request('GET', '/rule-errors?rule-id=Py.Dest.Raises')).body.results as any[]
  t.equal(errors.length, 1, 'the raising destinations() is a rule error of the record')
  t.match(errors[0].error, /^destinations\(\): RuntimeError: no routing table/)

  const ids = async (...rs: string[]) => new Set(await Promise.all(rs.map(async (r) => (await alertOf(r)).id)))
  await rx.x.until(() => rx.x.acked().size === 1, 'the destinations() alert at dest-x')
  await rx.outputs.until(() => rx.outputs.acked().size === 1, 'the OutputIds alert at outputs')
  await rx.high.until(() => rx.high.acked().size === 2, 'the severity-routed alerts at sev-high')
  t.same(new Set(rx.x.acked().keys()), await ids('Py.Dest.List'), 'Idempotency-Key = the alert id')
  t.same(new Set(rx.outputs.acked().keys()), await ids('Py.Dest.None'))
  t.same(new Set(rx.high.acked().keys()), await ids('Py.Dest.Raises', 'Py.Dest.Absent'))
  const nowhere = await ids('Py.Dest.Empty', 'Py.Dest.Skip')
  const everything = [...rx.x.got, ...rx.high.got, ...rx.outputs.got]
  t.notOk(
    everything.some((r) => nowhere.has(r.key)),
    'the alerts routed nowhere reached no receiver',
  )
})
