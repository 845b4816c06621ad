// The caches on the get-by-id path (docs/decisions.md, "Get by id: the verified-token cache, the
// direct route and the view cache"): a verified token stays revocable and expirable while cached,
// a GET after a write never serves the previous view, and the direct route answers what the
// router answers.
import t from 'tap'
import { TokenStore } from '../../src/auth/token-store.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('token store: a cached verification ends with a revoke, a reload and the expiry', async (t) => {
  const dir = tempDir()
  const server = new TokenStore(dir)
  const cli = new TokenStore(dir) // another process, as `rulekeeper token` is
  const a = cli.create({ name: 'a', permissions: ['View Rules'] })
  const b = cli.create({ name: 'b', permissions: ['View Rules'] })
  server.refresh()
  for (let i = 0; i < 3; i++) t.equal(server.verify(a.secret)?.id, a.token.id, 'verified, then from the cache')
  t.equal(server.verify(b.secret)?.id, b.token.id)
  t.equal(server.verify(`${a.secret}x`), undefined, 'a different secret is not a hit')
  t.equal(server.verify(a.secret.slice(0, -1)), undefined)

  // wait: a later modification time for the file
  await sleep(20) // a different modification time for the file
  t.ok(cli.revoke(a.token.id))
  t.equal(server.verify(a.secret)?.id, a.token.id, 'the server has not re-read the store yet (as before the cache)')
  server.refresh()
  t.equal(server.verify(a.secret), undefined, 'revoked once the store is re-read, though it was cached')
  t.equal(server.verify(b.secret)?.id, b.token.id, 'the other token still works')

  // A revoke in the same process re-reads at once.
  t.ok(server.revoke(b.token.id))
  t.equal(server.verify(b.secret), undefined)

  // Expiry is checked on every hit.
  const c = server.create({
    name: 'c',
    permissions: ['View Rules'],
    expiresAt: new Date(Date.now() + 300).toISOString(),
  })
  t.equal(server.verify(c.secret)?.id, c.token.id)
  t.equal(server.verify(c.secret)?.id, c.token.id, 'cached')
  await sleep(400) // wait: the cached token expires after 300 ms
  t.equal(server.verify(c.secret), undefined, 'expired while cached')
})

t.test('a revoked token stops working within a second even when cached', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const secret = await s.makeToken('hot', ['View Rules'])
  await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('Cache.Revoke'))
  for (let i = 0; i < 20; i++)
    t.equal((await s.send('GET', '/simple-rules/Cache.Revoke', undefined, { 'X-API-Key': secret })).status, 200)
  const id = new TokenStore(s.dataDir).list().find((x) => x.name === 'hot')!.id
  new TokenStore(s.dataDir).revoke(id) // beside the server, as the CLI does
  const revokedAt = Date.now()
  let status = 200
  while (Date.now() - revokedAt < 1000 && status !== 401) {
    status = (await s.send('GET', '/simple-rules/Cache.Revoke', undefined, { 'X-API-Key': secret })).status
    if (status !== 401) await sleep(25) // wait: poll interval of a wait on a condition
  }
  t.equal(status, 401, `refused ${Date.now() - revokedAt} ms after the revoke`)
  t.equal(
    (await s.send('GET', '/simple-rules/Cache.Revoke', undefined, { 'X-API-Key': secret })).status,
    401,
    'and stays refused',
  )
  t.equal((await s.request('GET', '/simple-rules/Cache.Revoke')).status, 200, 'the other tokens still work')
})

t.test('a GET after a write returns the new content, never the cached view', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const id = 'Cache.Fresh'
  t.equal((await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple(id))).status, 200)
  const first = await s.request('GET', `/simple-rules/${id}`)
  t.equal(first.body.severity, 'HIGH')
  t.equal((await s.request('GET', `/simple-rules/${id}`)).text, first.text, 'the same view twice')

  const put = await s.request(
    'PUT',
    `/simple-rules/${id}?run-tests-first=false`,
    SAMPLE_BODIES.simple(id, { severity: 'LOW', description: 'changed' }),
  )
  t.equal(put.status, 200, put.text)
  const second = await s.request('GET', `/simple-rules/${id}`)
  t.equal(second.body.severity, 'LOW')
  t.equal(second.body.description, 'changed')
  t.same(second.body, put.body, 'the GET answers what the PUT answered')
  t.not(second.text, first.text, 'not the view cached before the write')

  t.equal((await s.request('DELETE', `/simple-rules/${id}`)).status, 204)
  t.equal((await s.request('GET', `/simple-rules/${id}`)).status, 404)
  t.equal(
    (await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple(id, { severity: 'CRITICAL' })))
      .status,
    200,
  )
  const third = await s.request('GET', `/simple-rules/${id}`)
  t.equal(third.body.severity, 'CRITICAL', 'recreated: the new content')
})

t.test('the direct get-by-id route answers what the router answers', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const names = (s.service.app.middleware as Array<{ name: string }>).map((m) => m.name)
  t.ok(names.includes('getRuleById'), `the direct route is mounted, ahead of the router (${names.join(', ')})`)
  const id = 'Cache.Same-Rule_1'
  t.equal((await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple(id))).status, 200)
  const plain = await s.request('GET', `/simple-rules/${id}`)
  t.equal(plain.status, 200)
  t.match(plain.headers.get('content-type'), /^application\/json; charset=utf-8$/)
  t.ok(plain.headers.get('x-request-id'))
  // Through the router: a percent-encoded id, a trailing slash, another case of the path.
  for (const p of [
    `/simple-rules/${encodeURIComponent(id).replace('.', '%2E')}`,
    `/simple-rules/${id}/`,
    `/Simple-Rules/${id}`,
  ]) {
    const r = await s.request('GET', p)
    t.equal(r.status, 200, p)
    t.same(r.body, plain.body, p)
  }
  const head = await s.request('HEAD', `/simple-rules/${id}`)
  t.equal(head.status, 200)
  t.equal(head.text, '')
  t.equal((await s.request('GET', `/simple-rules/${id}?bogus=1`)).status, 400, 'unknown parameters still refused')
  t.equal((await s.request('GET', `/simple-rules/${id}?include-python=maybe`)).status, 400)
  t.equal((await s.request('GET', `/scheduled-rules/${id}`)).status, 404, 'another kind')
  t.equal((await s.send('GET', `/simple-rules/${id}`)).status, 401, 'no key')
  const m = await s.send('GET', '/metrics')
  t.match(m.text, /rulekeeper_http_requests_total\{method="GET",route="\/simple-rules\/:id",status="200"\} [1-9]/)
})
