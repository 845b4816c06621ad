// Route table: every route of the Koa app (read from its routers' layers) is checked over HTTP on a
// running server, with the default base path and with api.basePath /v1: 401 without or with a wrong
// token, 403 for a token without the permission, both decided before a byte of the body is read;
// only /openapi.json, /healthz, /metrics, /hooks/git and /http/* are open to X-API-Key-less callers.
// Real port: raw header bytes or lying lengths (refused before a byte of the body is read).
import t from 'tap'
import { rawRequest } from '../helpers/raw-http.js'
import { TokenStore } from '../../src/auth/token-store.js'
import { routeTable as routeTableOf, SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'

const KIND_PATHS = ['/correlation-rules', '/scheduled-rules', '/simple-rules']
const WEBHOOK_SECRET = 'route-table-webhook-secret'
const AUDIT_TOKEN = 'route-table-audit-token-0123456789'
const MiB = 1024 * 1024

interface Route {
  method: string
  path: string
}

const routeTable = (s: TestServer): Route[] => routeTableOf(s.server.app)

const concrete = (p: string) =>
  p
    .replace(':sourceId', 'editor-audit')
    .replace(/:id\b/, 'RouteTable.Some')
    .replace(/:[A-Za-z]+/g, 'x')

interface Answer {
  status: number
  body: any
  ms: number
}

/**
 * One request over a real socket (rawRequest). `declaredLength` announces a body far larger than what is sent (and
 * the request is never finished): only a server that decides without reading the body can answer.
 */
async function send(
  base: string,
  method: string,
  p: string,
  opts: { headers?: Record<string, string>; body?: Buffer | string; declaredLength?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body
  if (body !== undefined || opts.declaredLength !== undefined) {
    headers['Content-Length'] = String(opts.declaredLength ?? body!.length)
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json'
  }
  // No answer within 5 s: the server waited for the body.
  const declared = opts.declaredLength !== undefined
  const a = await rawRequest(`${base}${p}`, {
    method,
    headers,
    agent: false,
    body: declared ? (body ?? Buffer.from('{"id": "x"')) : body,
    unfinished: declared,
    timeoutMs: 5000,
  })
  return { status: a.status, body: a.json, ms: a.ms }
}

const hasMessage = (a: Answer) => typeof a.body?.message === 'string' && a.body.message.length > 0

for (const basePath of ['/', '/v1']) {
  const prefix = basePath === '/' ? '' : basePath

  t.test(
    `base path ${basePath}: every route but the open ones refuses a missing or wrong token (401) and a missing permission (403)`,
    async (t) => {
      const s = await startTestServer({
        config: {
          api: { basePath },
          logSources: [
            {
              id: 'editor-audit',
              logType: 'Editor.Audit',
              auth: { method: 'Bearer', tokenEnv: 'RK_ROUTE_TABLE_AUDIT' },
            },
          ],
        },
        env: { RULEKEEPER_GIT_WEBHOOK_SECRET: WEBHOOK_SECRET, RK_ROUTE_TABLE_AUDIT: AUDIT_TOKEN },
      })
      t.teardown(() => s.close())
      // makeToken waits for the server to know a new token by asking /status at the root, which is
      // 404 under /v1; so wait here, under the base path, until both are known (401 no more).
      const view = await s.makeToken('rt-view', ['View Rules'])
      const manageOnly = await s.makeToken('rt-manage-only', ['Manage Rules'])
      for (const secret of [view, manageOnly]) {
        for (
          let i = 0;
          i < 40 && (await s.request('GET', `${prefix}/status`, undefined, { 'X-API-Key': secret })).status === 401;
          i++
        )
          await new Promise((r) => setTimeout(r, 100)) // wait: poll interval of a wait on a condition
      }
      const store = new TokenStore(s.dataDir)
      const revoked = store.create({ name: 'rt-revoked', permissions: ['View Rules', 'Manage Rules'] })
      store.revoke(revoked.token.id)
      for (
        let i = 0;
        i < 40 &&
        (await s.request('GET', `${prefix}/status`, undefined, { 'X-API-Key': revoked.secret })).status !== 401;
        i++
      )
        await new Promise((r) => setTimeout(r, 100)) // wait: poll interval of a wait on a condition
      const headBefore = s.git('rev-parse', 'refs/heads/main')

      const table = routeTable(s)
      const key = (r: Route) => `${r.method} ${r.path}`
      const have = new Set(table.map(key))
      // The table is the app's, not a list kept in this test; it must at least hold what api.md promises.
      const promised = [
        ...KIND_PATHS.flatMap((k) => [
          `GET ${prefix}${k}`,
          `POST ${prefix}${k}`,
          `GET ${prefix}${k}/:id`,
          `PUT ${prefix}${k}/:id`,
          `DELETE ${prefix}${k}/:id`,
        ]),
        `GET ${prefix}/status`,
        `POST ${prefix}/reconcile`,
        `GET ${prefix}/whoami`,
        `GET ${prefix}/kinds`,
        `GET ${prefix}/log-types`,
        `GET ${prefix}/openapi.json`,
        'GET /healthz',
        'GET /metrics',
        'POST /hooks/git',
        'POST /http/:sourceId',
      ]
      t.same(
        promised.filter((p) => !have.has(p)),
        [],
        'the route table holds every route of the spec, at the right base',
      )
      t.comment(`route table (${table.length}): ${[...have].join(', ')}`)

      const open = new Set([`${prefix}/openapi.json`, '/healthz', '/metrics'])
      const ownAuth = (p: string) => p === '/hooks/git' || p.startsWith('/http/')
      let checked = 0
      for (const r of table) {
        const p = concrete(r.path)
        // POST /replay only reads (alerts.md §3: View Rules), so it is checked as a read.
        const isGet = r.method === 'GET' || r.method === 'HEAD' || r.path === `${prefix}/replay`
        const label = `${r.method} ${r.path}`
        const withBody = r.method === 'POST' || r.method === 'PUT'
        const body = withBody ? JSON.stringify(SAMPLE_BODIES.simple('RouteTable.Some')) : undefined
        if (open.has(r.path)) {
          for (const headers of [{}, { 'X-API-Key': 'wrong' }] as Array<Record<string, string>>) {
            const a = await send(s.url, r.method, p, { headers })
            t.equal(a.status, 200, `${label} is open (no token needed)`)
          }
          continue
        }
        if (r.path === '/hooks/git') {
          const payload = '{"ref":"refs/heads/main"}'
          for (const headers of [
            {},
            { 'X-API-Key': s.token },
            { 'X-Hub-Signature-256': `sha256=${'0'.repeat(64)}` },
            { 'X-Gitlab-Token': 'wrong' },
          ] as Array<Record<string, string>>) {
            const a = await send(s.url, r.method, p, { headers, body: payload })
            t.equal(
              a.status,
              401,
              `${label} refuses a missing or wrong signature (${Object.keys(headers).join(',') || 'none'}); an API key is no signature`,
            )
            t.ok(hasMessage(a), `${label}: 401 with a message`)
          }
          checked++
          continue
        }
        if (ownAuth(r.path)) {
          const line = '{"id":"e1"}\n'
          for (const headers of [
            {},
            { 'X-API-Key': s.token },
            { Authorization: 'Bearer wrong' },
            { Authorization: `Bearer ${s.token}` },
          ] as Array<Record<string, string>>) {
            const a = await send(s.url, r.method, p, {
              headers: { 'Content-Type': 'application/x-ndjson', ...headers },
              body: line,
            })
            t.equal(a.status, 401, `${label} needs its own bearer token (${Object.keys(headers).join(',') || 'none'})`)
            t.ok(hasMessage(a), `${label}: 401 with a message`)
          }
          const early = await send(s.url, r.method, p, {
            headers: { 'Content-Type': 'application/x-ndjson' },
            declaredLength: 50 * MiB,
          })
          t.equal(early.status, 401, `${label}: 401 before the body is read`)
          checked++
          continue
        }

        // X-API-Key routes.
        const wrongKeys: Array<[string, Record<string, string>]> = [
          ['no token', {}],
          ['an empty token', { 'X-API-Key': '' }],
          ['an unknown token', { 'X-API-Key': `rk_AAAAAAAAAAAA_${'A'.repeat(43)}` }],
          ['a mangled token', { 'X-API-Key': `${s.token}x` }],
          ['a revoked token', { 'X-API-Key': revoked.secret }],
          ['the token as a bearer header', { Authorization: `Bearer ${s.token}` }],
        ]
        for (const [what, headers] of wrongKeys) {
          const a = await send(s.url, r.method, p, { headers, body })
          t.equal(a.status, 401, `${label} with ${what}: 401`)
          if (r.method !== 'HEAD') t.ok(hasMessage(a), `${label} with ${what}: a message`)
        }
        const lacking = isGet ? manageOnly : view
        const a = await send(s.url, r.method, p, { headers: { 'X-API-Key': lacking }, body })
        if ([`${prefix}/whoami`, `${prefix}/kinds`, `${prefix}/log-types`].includes(r.path)) {
          // Any known token may learn what it is and what the server offers, whatever its permissions.
          t.equal(a.status, 200, `${label} with a token without View Rules: 200`)
          checked++
          continue
        }
        t.equal(a.status, 403, `${label} with a token without ${isGet ? 'View Rules' : 'Manage Rules'}: 403`)
        if (r.method !== 'HEAD') t.ok(hasMessage(a), `${label}: 403 with a message`)

        if (withBody) {
          // Bodies that would be 413, 415 or 400 once read: still 401/403, so nothing was read or parsed.
          const bad: Array<[string, { headers?: Record<string, string>; body?: Buffer | string }]> = [
            ['a 2 MiB body', { body: Buffer.alloc(2 * MiB, 0x78) }],
            ['invalid JSON', { body: '{"id": ' }],
            ['invalid UTF-8', { body: Buffer.from([0x7b, 0xff, 0x7d]) }],
            ['a text/plain body', { body: 'hello', headers: { 'Content-Type': 'text/plain' } }],
            ['a gzip body', { body: Buffer.from([0x1f, 0x8b, 0x08, 0]), headers: { 'Content-Encoding': 'gzip' } }],
          ]
          for (const [what, o] of bad) {
            const none = await send(s.url, r.method, p, o)
            t.equal(none.status, 401, `${label}, no token, ${what}: 401`)
            const v = await send(s.url, r.method, p, { ...o, headers: { ...(o.headers ?? {}), 'X-API-Key': lacking } })
            t.equal(v.status, 403, `${label}, without its permission, ${what}: 403`)
          }
          // A body announced as 50 MiB of which 10 bytes arrive: only a decision made before reading answers.
          t.equal(
            (await send(s.url, r.method, p, { declaredLength: 50 * MiB })).status,
            401,
            `${label}: 401 while the body is still on its way`,
          )
          t.equal(
            (await send(s.url, r.method, p, { declaredLength: 50 * MiB, headers: { 'X-API-Key': lacking } })).status,
            403,
            `${label}: 403 while the body is still on its way`,
          )
          // /reconcile and /restore take no body: nothing of one is judged there.
          if (r.path !== `${prefix}/reconcile` && !r.path.endsWith('/restore')) {
            // Controls: with the permission the same bodies are judged (so the statuses above mean something).
            t.equal(
              (await send(s.url, r.method, p, { declaredLength: 50 * MiB, headers: { 'X-API-Key': s.token } })).status,
              413,
              `${label}: with Manage Rules the announced size is refused (413)`,
            )
            t.equal(
              (await send(s.url, r.method, p, { body: '{"id": ', headers: { 'X-API-Key': s.token } })).status,
              400,
              `${label}: with Manage Rules invalid JSON is a 400`,
            )
          }
        }
        checked++
      }
      t.ok(checked >= 20, `${checked} routes checked for authentication`)

      // The open routes and what stays at the root.
      t.equal(
        (await send(s.url, 'GET', `${prefix}/openapi.json`)).status,
        200,
        'openapi.json under the base path, no auth',
      )
      t.equal((await send(s.url, 'GET', '/healthz')).status, 200, '/healthz at the root')
      t.equal((await send(s.url, 'GET', '/metrics')).status, 200, '/metrics at the root')
      const authed = { 'X-API-Key': s.token }
      t.equal(
        (await send(s.url, 'GET', `${prefix}/simple-rules`, { headers: authed })).status,
        200,
        'the rule routes answer under the base path',
      )
      t.equal(
        (await send(s.url, 'GET', `${prefix}/status`, { headers: authed })).status,
        200,
        '/status answers under the base path',
      )
      if (prefix) {
        for (const [m, p] of [
          ['GET', '/simple-rules'],
          ['GET', '/correlation-rules/x'],
          ['GET', '/status'],
          ['POST', '/reconcile'],
          ['GET', '/whoami'],
          ['GET', '/openapi.json'],
          ['GET', `${prefix}/healthz`],
          ['GET', `${prefix}/metrics`],
          ['POST', `${prefix}/http/editor-audit`],
          ['POST', `${prefix}/hooks/git`],
        ] as const) {
          const a = await send(s.url, m, p, { headers: authed })
          t.equal(a.status, 404, `${m} ${p} (the path outside its place) is 404`)
        }
      } else {
        for (const p of ['/v1/simple-rules', '/v1/status', '/v1/openapi.json'])
          t.equal((await send(s.url, 'GET', p, { headers: authed })).status, 404, `${p} is 404 without a base path`)
      }
      t.equal(s.git('rev-parse', 'refs/heads/main'), headBefore, 'none of these requests wrote anything')
    },
  )
}
