// The service over the PostgreSQL state store (`state.postgres.url`): detection writes its output
// there, not under the data directory; after a restart the alert, its count and its status are
// still there and its group goes on counting; a service started on another data directory over the
// same database (another replica) serves the same alert; the detection checkpoint is the replica's own.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'

const alertsOf = async (s: Awaited<ReturnType<typeof startInProcess>>, ruleId: string) =>
  (await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=100`)).body.results as Array<{
    id: string
    eventCount: number
    status: string
  }>

t.test('alerts survive a restart over PostgreSQL, and another replica serves them', async (t) => {
  const url = await freshDatabase()
  const config = { state: { postgres: { url }, replica: 'rk-a' } }
  const dataDir = tempDir('rk-pg-service-')
  const otherDir = tempDir('rk-pg-service-b-')
  t.teardown(() => {
    for (const d of [dataDir, otherDir]) fs.rmSync(d, { recursive: true, force: true })
  })
  let s = await startInProcess({ dataDir, env: DETECT_ENV, config })
  t.teardown(() => s.close())
  await commandRule(s, 'PG.Rule', 'pgcmd', { threshold: 2 })
  await sendAndDetect(s, [
    commandRecord('pg', 'pgcmd', '2026-11-20T10:00:00Z'),
    commandRecord('pg', 'pgcmd', '2026-11-20T10:01:00Z'),
    commandRecord('pg', 'pgcmd', '2026-11-20T10:02:00Z'),
  ])
  const [alert, ...more] = await alertsOf(s, 'PG.Rule')
  t.same(more, [], 'one alert')
  t.equal(alert?.eventCount, 3)
  t.equal((await s.request('PATCH', `/alerts/${alert!.id}`, { status: 'TRIAGED' })).status, 200)
  t.notOk(
    fs.existsSync(path.join(dataDir, 'detections', 'checkpoint.json')),
    'no detection output under the data directory',
  )
  t.ok(s.server.detection.store.checkpoint.records >= 3, 'the checkpoint counts the records evaluated')

  // A restart on the same data directory: the alert, its count and status are read back.
  await s.close()
  s = await startInProcess({ dataDir, env: DETECT_ENV, config })
  let [again] = await alertsOf(s, 'PG.Rule')
  t.same([again?.id, again?.eventCount, again?.status], [alert!.id, 3, 'TRIAGED'], 'the alert after a restart')
  t.ok(s.server.detection.store.checkpoint.records >= 3, 'the checkpoint is where it was: nothing evaluated again')
  await sendAndDetect(s, [commandRecord('pg', 'pgcmd', '2026-11-20T10:03:00Z')])
  ;[again] = await alertsOf(s, 'PG.Rule')
  t.equal(again?.eventCount, 4, 'the group goes on counting after the restart')
  const context = await s.request('GET', `/alerts/${alert!.id}`)
  t.equal(context.status, 200)

  // Another replica (its own data directory) over the same database serves the same alert.
  await s.close()
  const other = await startInProcess({
    dataDir: otherDir,
    env: DETECT_ENV,
    config: { state: { postgres: { url }, replica: 'rk-b' } },
  })
  t.teardown(() => other.close())
  const [seen] = await alertsOf(other, 'PG.Rule')
  t.same([seen?.id, seen?.eventCount, seen?.status], [alert!.id, 4, 'TRIAGED'])
  t.equal(other.server.detection.store.checkpoint.records, 0, "replica b's own checkpoint: its log files are its own")
})
