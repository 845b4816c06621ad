// GET /log-types in process: `{ logTypes: [{ name, table, fields: [{ name, type, required,
// description }] }] }` as the provider main.ts hands to createApp lists them (Editor.Audit today,
// with its required `metadata.timestamp`); any known token may ask, an unknown one is a 401.
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'

t.test('the log types ingested, with their table and fields', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const r = await s.request('GET', '/log-types')
  t.equal(r.status, 200, r.text)
  t.equal(r.headers.get('cache-control'), 'no-store')
  t.same(Object.keys(r.body), ['logTypes'])
  const names = r.body.logTypes.map((l: { name: string }) => l.name)
  t.ok(names.includes('Editor.Audit'), 'the log type ingest receives')
  for (const lt of r.body.logTypes) {
    t.same(Object.keys(lt).sort(), ['fields', 'name', 'table'], `${lt.name}: its keys`)
    t.match(lt.table, /^panther_logs\.public\.[a-z0-9_]+$/, `${lt.name}: a table as Panther names it`)
    t.ok(lt.fields.length > 0, `${lt.name}: fields`)
    for (const f of lt.fields) {
      t.same(Object.keys(f).sort(), ['description', 'name', 'required', 'type'], `${lt.name}.${f.name}`)
      t.type(f.required, 'boolean')
      t.type(f.type, 'string')
      t.type(f.description, 'string')
    }
  }
  const audit = r.body.logTypes.find((l: { name: string }) => l.name === 'Editor.Audit')
  t.equal(audit.table, 'panther_logs.public.editor_audit')
  const field = (n: string) => audit.fields.find((f: { name: string }) => f.name === n)
  t.match(field('metadata.timestamp'), { type: 'string', required: true })
  t.match(field('metadata'), { type: 'object', required: true })
  t.match(field('login.success'), { type: 'boolean', required: false })
  t.match(field('team_hook.operating_systems'), { type: 'list of strings' })
  t.match(field('invite_link.expires_in_seconds'), { type: 'integer' })
  t.equal((await s.request('GET', '/log-types?x=1')).status, 400, 'an unknown parameter')
})

t.test('any known token may ask; none or an unknown one is a 401', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const alertsOnly = await s.makeToken('alerts-only', ['View Alerts'])
  t.equal((await s.send('GET', '/log-types', undefined, { 'X-API-Key': alertsOnly })).status, 200)
  t.equal((await s.send('GET', '/log-types')).status, 401, 'no token')
  const unknown = await s.send('GET', '/log-types', undefined, { 'X-API-Key': `rk_AAAAAAAAAAAA_${'A'.repeat(43)}` })
  t.equal(unknown.status, 401, 'an unknown token')
  t.type(unknown.body.message, 'string')
})
