// Who may post: the source's Bearer token only, decided before the body is read; the generated
// token is kept 0600 under the data dir and reused at the next start.
// Real port: raw header bytes or lying lengths (refused before the body is read).
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { startIngestServer } from './fixtures/ingest-app.js'
import { TOKEN, makeRecord, post, storeFiles, tempDataDir } from './helpers.js'
import { rawRequest } from '../helpers/raw-http.js'

const body = JSON.stringify(makeRecord('auth-1'))

t.test('wrong, missing and foreign tokens answer 401 and store nothing', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN } })
  t.teardown(() => s.close())
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['wrong token', { authorization: 'Bearer not-the-token' }],
    ['token with a suffix', { authorization: `Bearer ${TOKEN}x` }],
    ['token prefix', { authorization: `Bearer ${TOKEN.slice(0, -1)}` }],
    ['Basic scheme', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }],
    ['bare token', { authorization: TOKEN }],
    ['an API token in X-API-Key', { 'x-api-key': 'rk_api_0123456789abcdef' }],
    ['an API token as Bearer', { authorization: 'Bearer rk_api_0123456789abcdef' }],
    ['the right token in X-API-Key', { 'x-api-key': TOKEN }],
  ]
  for (const [name, headers] of cases) {
    const res = await post(`${s.url}/http/editor-audit`, body, headers)
    t.equal(res.status, 401, name)
    t.type(res.body.message, 'string', name)
    t.notOk(JSON.stringify(res.body).includes(TOKEN), `${name}: the token is not echoed`)
  }
  t.same(await storeFiles(dataDir), [])
  t.equal(
    (await post(`${s.url}/http/editor-audit`, body, { authorization: `bearer ${TOKEN}` })).status,
    200,
    'the scheme is case-insensitive',
  )
})

t.test('auth is decided before the body: an oversized or broken body still answers 401', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN } })
  t.teardown(() => s.close())
  const big = Buffer.alloc(3 * 1024 * 1024, 0x20)
  const refused = await post(`${s.url}/http/editor-audit`, big, { authorization: 'Bearer nope' })
  t.equal(refused.status, 401)
  t.equal(refused.headers.connection, 'close', 'the unread body is not drained')
  // A body that never ends: the 401 must come from the headers alone.
  const { status } = await rawRequest(`${s.url}/http/editor-audit`, {
    method: 'POST',
    headers: { authorization: 'Bearer nope' },
    body: '{"metadata":',
    unfinished: true,
  })
  t.equal(status, 401)
  t.equal((await post(`${s.url}/http/editor-audit`, 'not json', {})).status, 401)
  t.equal((await post(`${s.url}/http/editor-audit`, '', { 'content-encoding': 'br' })).status, 401)
})

t.test('an unknown source answers 404', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN } })
  t.teardown(() => s.close())
  const res = await post(`${s.url}/http/no-such-source`, body)
  t.equal(res.status, 404)
  t.match(res.body.message, /no log source/)
})

t.test('without the env var a token is generated once, kept 0600, and reused', async (t) => {
  const dataDir = await tempDataDir(t)
  const s1 = await startIngestServer({ dataDir, env: {} })
  const file = path.join(dataDir, 'log-sources', 'editor-audit.token')
  t.same(s1.sources.bannerLines, [`log source editor-audit: POST /http/editor-audit, Bearer token in ${file}`])
  const token = (await readFile(file, 'utf8')).trim()
  t.ok(token.length >= 40, 'a long random token')
  t.equal((await stat(file)).mode & 0o777, 0o600)
  t.notOk(s1.sources.bannerLines.join('\n').includes(token), 'the banner names the file, not the secret')
  t.equal((await post(`${s1.url}/http/editor-audit`, body, { authorization: `Bearer ${token}` })).status, 200)
  t.equal((await post(`${s1.url}/http/editor-audit`, body, { authorization: `Bearer ${TOKEN}` })).status, 401)
  await s1.close()

  const s2 = await startIngestServer({ dataDir, env: {} })
  t.teardown(() => s2.close())
  t.equal((await readFile(file, 'utf8')).trim(), token, 'the same token after a restart')
  const again = await post(`${s2.url}/http/editor-audit`, JSON.stringify(makeRecord('auth-2')), {
    authorization: `Bearer ${token}`,
  })
  t.equal(again.status, 200)

  // The env var wins over the file when both exist.
  const s3 = await startIngestServer({
    dataDir: await tempDataDir(t),
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: 'from-env' },
  })
  t.teardown(() => s3.close())
  t.match(s3.sources.bannerLines[0], /from RULEKEEPER_EDITOR_AUDIT_TOKEN/)
  t.equal((await post(`${s3.url}/http/editor-audit`, body, { authorization: 'Bearer from-env' })).status, 200)
})

t.test('each source has its own token', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({
    dataDir,
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN, OTHER_TOKEN: 'other-secret' },
    overrides: {
      logSources: [
        {
          id: 'editor-audit',
          logType: 'Editor.Audit',
          auth: { method: 'Bearer', tokenEnv: 'RULEKEEPER_EDITOR_AUDIT_TOKEN' },
        },
        { id: 'editor-audit-eu', logType: 'Editor.Audit', auth: { method: 'Bearer', tokenEnv: 'OTHER_TOKEN' } },
      ],
    },
  })
  t.teardown(() => s.close())
  t.equal((await post(`${s.url}/http/editor-audit-eu`, body, { authorization: `Bearer ${TOKEN}` })).status, 401)
  t.equal((await post(`${s.url}/http/editor-audit`, body, { authorization: 'Bearer other-secret' })).status, 401)
  const eu = await post(`${s.url}/http/editor-audit-eu`, body, { authorization: 'Bearer other-secret' })
  t.equal(eu.status, 200)
  t.equal(eu.body.accepted, 1, 'duplicate filters are per source')
})
