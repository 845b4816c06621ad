// With a remote: If-Match is judged inside the writer on the tip the write finally commits on. A PUT
// whose push is rejected because a pull request was merged meanwhile is rebuilt on the new tip: a
// 412 when that pull request changed the rule (nothing pushed), a 200 when it changed another rule
// (the write lands on top of the pull request).
// Real port: a remote (the git server).
import t from 'tap'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { remoteWorld, simplePath } from './remote-fixture.js'

const NO_TESTS = '?run-tests-first=false'
const frida = { name: 'Frida Merger', email: 'frida@example.com' }

t.test('If-Match against a write rebuilt on a moved remote tip', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  for (const id of ['Remote.Guarded', 'Remote.Other'])
    t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))).status, 200)
  const rebuilds = async () =>
    Number(/^rulekeeper_push_retries_total (\d+)/m.exec((await s.request('GET', '/metrics')).text)?.[1] ?? 0)
  const retriesBefore = await rebuilds()

  // A pull request changing the guarded rule is merged on the remote; the service has not seen it.
  const etag = (await s.request('GET', '/simple-rules/Remote.Guarded')).headers.get('etag')!
  const c = await w.clone(frida)
  const p = simplePath('Remote.Guarded')
  t.ok(c.read(p), 'the API wrote the file where simplePath says')
  c.write(p, c.read(p)!.replace(/^Severity: .*$/m, 'Severity: Info'))
  const merged = await c.commitAll('Lower Remote.Guarded (#9)', '2026-05-01T00:00:00Z')
  t.ok((await c.push()).ok)
  t.equal(s.git('rev-parse', 'main').trim() === merged, false, 'the service has not fetched it')

  const stale = await s.request(
    'PUT',
    `/simple-rules/Remote.Guarded${NO_TESTS}`,
    SAMPLE_BODIES.simple('Remote.Guarded', { description: 'mine' }),
    {
      'If-Match': etag,
    },
  )
  t.equal(stale.status, 412, stale.text)
  t.match(stale.body.message, /changed meanwhile/)
  t.equal(await w.remote.head(), merged, 'nothing was pushed over the pull request')
  t.ok((await rebuilds()) > retriesBefore, 'the write was rebuilt on the new tip (a rejected push)')

  // Another pull request changes the other rule: the guarded write is rebuilt and goes through.
  const now = (await s.request('GET', '/simple-rules/Remote.Guarded')).headers.get('etag')!
  t.not(now, etag, 'the ETag follows the merged file')
  await c.syncToRemote()
  const q = simplePath('Remote.Other')
  c.write(q, c.read(q)!.replace(/^Severity: .*$/m, 'Severity: Info'))
  const other = await c.commitAll('Lower Remote.Other (#10)', '2026-05-02T00:00:00Z')
  t.ok((await c.push()).ok)
  const ok = await s.request(
    'PUT',
    `/simple-rules/Remote.Guarded${NO_TESTS}`,
    SAMPLE_BODIES.simple('Remote.Guarded', { description: 'mine' }),
    {
      'If-Match': now,
    },
  )
  t.equal(ok.status, 200, ok.text)
  const tip = await w.remote.head()
  t.equal(await w.remote.git('rev-parse', `${tip}^`).then((x) => x.trim()), other, 'rebuilt on the pull request')
  t.equal(ok.headers.get('etag'), `"${(await w.remote.git('rev-parse', `${tip}:${p}`)).trim()}"`)
  const h = await s.request('GET', '/simple-rules/Remote.Guarded/history')
  t.same(
    h.body.results.map((e: { change: string; actor: { type: string } }) => [e.change, e.actor.type]),
    [
      ['updated', 'api-token'],
      ['updated', 'user'],
      ['created', 'api-token'],
    ],
  )
  t.equal(h.body.results[1].authorName, 'Frida Merger')
})
