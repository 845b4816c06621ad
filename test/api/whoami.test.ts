// GET /whoami through the real service (in process): a known token learns its id, name, permissions, creation
// and expiry (never its secret or hash), whatever its permissions; no, an unknown or a revoked token
// is a 401; under api.basePath it lives below the base path.
import t from 'tap'
import { TokenStore } from '../../src/auth/token-store.js'
import { startInProcess } from '../helpers/in-process.js'

t.test('each token learns what it is; a wrong one is a 401', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const alerts = await s.makeToken('triage', ['View Alerts'])
  const mine = await s.request('GET', '/whoami', undefined, { 'X-API-Key': alerts })
  t.equal(mine.status, 200, mine.text)
  t.same(Object.keys(mine.body).sort(), ['createdAt', 'expiresAt', 'id', 'name', 'permissions'])
  t.equal(mine.body.name, 'triage')
  t.same(mine.body.permissions, ['View Alerts'], 'a token without View Rules may ask too')
  t.equal(mine.body.expiresAt, null)
  t.match(mine.body.createdAt, /^\d{4}-\d\d-\d\dT/)
  const listed = new TokenStore(s.dataDir).list().find((x) => x.name === 'triage')!
  t.equal(mine.body.id, listed.id, 'the id the CLI lists')
  t.notMatch(mine.text, alerts, 'never the secret')
  t.notMatch(mine.text, /salt|hash/)

  const boot = await s.request('GET', '/whoami')
  t.equal(boot.status, 200)
  t.ok(boot.body.permissions.includes('Manage Rules'), 'the bootstrap token manages rules')
  t.not(boot.body.id, mine.body.id)

  const store = new TokenStore(s.dataDir)
  const revoked = store.create({ name: 'gone', permissions: ['View Rules'] })
  store.revoke(revoked.token.id)
  for (const [what, headers] of [
    ['no token', { 'X-API-Key': '' }],
    ['an unknown token', { 'X-API-Key': `rk_AAAAAAAAAAAA_${'A'.repeat(43)}` }],
    ['a revoked token', { 'X-API-Key': revoked.secret }],
  ] as Array<[string, Record<string, string>]>) {
    const r = await s.request('GET', '/whoami', undefined, headers)
    t.equal(r.status, 401, what)
    t.match(r.body.message, /X-API-Key|token/)
  }
  t.equal((await s.request('GET', '/whoami?x=1')).status, 400, 'an unknown parameter')
})

t.test('under api.basePath /v1', async (t) => {
  const s = await startInProcess({ config: { api: { basePath: '/v1' } } })
  t.teardown(() => s.close())
  t.equal((await s.request('GET', '/v1/whoami')).status, 200)
  t.equal((await s.request('GET', '/whoami')).status, 404)
})
