// GET /kinds in process: every kind of the registry (rules/kinds/) with its path, label, id field,
// Python and log-type flags, read-only fields and template; any known token may ask, an unknown one
// is a 401; each kind's template is valid and its tests pass (run-tests-only, then created for real);
// under api.basePath it lives below the base path.
import t from 'tap'
import { KINDS } from '../../src/rules/kinds/index.js'
import { startInProcess } from '../helpers/in-process.js'

t.test('every registered kind, as the API names it', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const r = await s.request('GET', '/kinds')
  t.equal(r.status, 200, r.text)
  t.match(r.headers.get('content-type'), /application\/json/)
  t.equal(r.headers.get('cache-control'), 'no-store')
  const kinds = r.body.kinds as Array<Record<string, any>>
  t.same(
    kinds.map((k) => k.name),
    KINDS.map((k) => k.name),
    'the registry’s kinds, in its order',
  )
  for (const def of KINDS) {
    const k = kinds.find((x) => x.name === def.name)!
    t.equal(k.path, def.apiPath, `${def.name}: path`)
    t.equal(k.label, def.label, `${def.name}: label`)
    t.equal(k.title, def.title, `${def.name}: title`)
    t.equal(k.idField, 'id')
    t.equal(k.python, def.companion?.apiField === 'body', `${def.name}: Python code`)
    t.equal(k.pythonView, def.pythonView, `${def.name}: generated Python`)
    t.equal(
      k.logTypeFilter,
      def.listFilters.some((f) => f.param === 'log-type'),
      `${def.name}: log-type filter`,
    )
    t.ok(k.readOnlyFields.includes('createdAt') && k.readOnlyFields.includes('lastModifiedBy'), 'history fields')
    t.notOk(k.readOnlyFields.includes('id') || k.readOnlyFields.includes('body'), 'written fields are not read-only')
    t.same(k.template, def.template, `${def.name}: its template`)
    // The kind's collection answers at the path given.
    t.equal((await s.request('GET', `/${k.path}?limit=1`)).status, 200, `${def.name}: /${k.path} is its list`)
  }
  const by = (n: string) => kinds.find((k) => k.name === n)!
  t.equal(by('policy').idFileKey, 'PolicyID')
  t.equal(by('simple').idFileKey, 'RuleID')
  t.same(
    [...by('correlation').readOnlyFields].filter((f: string) => ['logTypes', 'managed'].includes(f)).sort(),
    ['logTypes', 'managed'],
    'a correlation rule derives its log types and managed',
  )
  t.ok(by('simple').readOnlyFields.includes('pythonBody'))
  t.equal((await s.request('GET', '/kinds?x=1')).status, 400, 'an unknown parameter')
})

t.test('any known token may ask; none or an unknown one is a 401', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const perms of [['View Alerts'], ['Manage Rules'], ['View Rules']] as const) {
    const tok = await s.makeToken(`only-${perms[0]}`, [...perms])
    const r = await s.send('GET', '/kinds', undefined, { 'X-API-Key': tok })
    t.equal(r.status, 200, `a token with only ${perms[0]}`)
  }
  for (const [what, headers] of [
    ['no token', {}],
    ['an unknown token', { 'X-API-Key': `rk_AAAAAAAAAAAA_${'A'.repeat(43)}` }],
  ] as Array<[string, Record<string, string>]>) {
    const r = await s.send('GET', '/kinds', undefined, headers)
    t.equal(r.status, 401, what)
    t.type(r.body.message, 'string')
  }
})

t.test('each kind’s template is valid and its tests pass', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const kinds = (await s.request('GET', '/kinds')).body.kinds as Array<Record<string, any>>
  // The correlation template refers to two rules: they exist first, as in a real repository.
  for (const id of ['Some.Rule.Id', 'Another.Rule.Id']) {
    const simple = kinds.find((k) => k.name === 'simple')!
    const r = await s.request('POST', `/${simple.path}`, { ...simple.template, id })
    t.equal(r.status, 200, `${id}: ${r.text}`)
  }
  for (const k of kinds) {
    const tested = await s.request('POST', `/${k.path}?run-tests-only=true`, k.template)
    t.equal(tested.status, 204, `${k.name}: its template's tests pass (${tested.text})`)
    const made = await s.request('POST', `/${k.path}`, k.template, { 'X-Change-Reason': `the ${k.label} template` })
    t.equal(made.status, 200, `${k.name}: its template is created (${made.text})`)
    t.equal(made.body.id, k.template.id)
  }
})

t.test('under api.basePath /v1', async (t) => {
  const s = await startInProcess({ config: { api: { basePath: '/v1' } } })
  t.teardown(() => s.close())
  t.equal((await s.request('GET', '/v1/kinds')).status, 200)
  t.equal((await s.request('GET', '/kinds')).status, 404)
})
