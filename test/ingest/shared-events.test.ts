// The shared events directory (`state.eventsDir`): two replicas over one PostgreSQL store the records
// they receive in their own folders (`<dir>/<replica>/…`, nothing under their data directories),
// each evaluates only its own; a replay and a query on one replica count both replicas' records,
// and one replica reads the matched records of an alert the other raised (GET /alerts/{id}/events).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { listDataFiles } from '../../src/detect/stored-log.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'

const DAY = { from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' }

t.test('two replicas share an events directory: each writes its folder, every reader reads both', async (t) => {
  t.setTimeout(120_000)
  const url = await freshDatabase()
  const eventsDir = tempDir('rk-shared-events-')
  const dirs = { 'rk-a': tempDir('rk-shared-a-'), 'rk-b': tempDir('rk-shared-b-') }
  t.teardown(() => {
    for (const d of [eventsDir, ...Object.values(dirs)]) fs.rmSync(d, { recursive: true, force: true })
  })
  const start = async (replica: 'rk-a' | 'rk-b') => {
    const s = await startInProcess({
      dataDir: dirs[replica],
      env: DETECT_ENV,
      config: { state: { postgres: { url }, replica, eventsDir } },
    })
    t.teardown(() => s.close())
    return s
  }
  const a = await start('rk-a')
  let b: InProcessServer = await start('rk-b')
  // One rule per replica (each has its own embedded repository here): their groups never meet.
  await commandRule(a, 'SharedA.Rule', 'cmda')
  await commandRule(b, 'SharedB.Rule', 'cmdb')
  const fromA = ['10:00', '10:01', '10:02'].map((m) => commandRecord('on-a', 'cmda', `2026-11-20T${m}:00Z`))
  const fromB = ['10:03', '10:04'].map((m) => commandRecord('on-b', 'cmdb', `2026-11-20T${m}:00Z`))
  await sendAndDetect(a, fromA)
  await sendAndDetect(b, fromB)

  for (const [replica, n] of [
    ['rk-a', 3],
    ['rk-b', 2],
  ] as const) {
    const files = await listDataFiles(eventsDir, `${replica}/Editor.Audit`)
    t.ok(files.length > 0, `${replica} wrote its own folder`)
    const lines = files.map((f) => fs.readFileSync(path.join(eventsDir, f), 'utf8').split('\n').filter(Boolean))
    t.equal(lines.flat().length, n, `${replica}'s folder holds the records it received`)
    t.notOk(fs.existsSync(path.join(dirs[replica], 'logs', 'Editor.Audit')), 'nothing under its data directory')
  }
  t.equal(a.server.detection.store.checkpoint.records, 3, 'a evaluated its own records only')
  t.equal(b.server.detection.store.checkpoint.records, 2, 'b evaluated its own records only')

  // A replay on either replica reads both folders.
  for (const s of [a, b]) {
    const replayed = await s.request('POST', '/replay', DAY)
    t.equal(replayed.status, 200, replayed.text)
    t.equal(replayed.body.records, 5, "a replay reads both replicas' records")
  }
  const onA = await a.request('POST', '/replay', { ...DAY, ruleIds: ['SharedA.Rule'] })
  t.equal(onA.body.matches, 3)

  // So does a query.
  const analyst = await a.makeToken('analyst', ['Query Data'])
  const q = await a.send(
    'POST',
    '/queries',
    {
      sql: "SELECT count(*) AS n, count(DISTINCT team_command.command_name) AS kinds FROM editor_audit WHERE p_event_time >= '2026-11-20'",
    },
    { 'X-API-Key': analyst },
  )
  t.equal(q.status, 200, q.text)
  t.same(q.body.rows ?? q.body.results, [{ n: 5, kinds: 2 }], "a query reads both replicas' records")

  // b (started again, it reads the alerts from PostgreSQL) reads the records of a's alert from a's folder.
  await b.close()
  b = await start('rk-b')
  t.equal(b.server.detection.store.checkpoint.records, 2, 'its own folder is where its checkpoint left it')
  const own = (await b.request('GET', '/alerts?rule-id=SharedB.Rule')).body.results as Array<{ eventCount: number }>
  t.same(
    own.map((x) => x.eventCount),
    [2],
    'nothing evaluated again after the restart',
  )
  const alerts = await b.request('GET', '/alerts?rule-id=SharedA.Rule')
  const [alert] = alerts.body.results as Array<{ id: string; eventCount: number }>
  t.equal(alert?.eventCount, 3, "b serves a's alert")
  const events = await b.request('GET', `/alerts/${alert!.id}/events`)
  t.equal(events.status, 200, events.text)
  t.same(
    (events.body.results as Array<{ metadata: { id: string } }>).map((r) => r.metadata.id),
    fromA.map((r) => (r.metadata as { id: string }).id),
    "b reads a's records from a's folder",
  )
})
