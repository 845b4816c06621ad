// Pushes across replicas (LISTEN/NOTIFY on the PostgreSQL state store): three services over one
// smart-HTTP Git remote and one PostgreSQL, their scheduled reconcile a year apart, so only the
// notification explains a replica serving another's write (or a webhook sent to another) within
// a second (each replica's own start-up reconcile ended before the interval starts); a replica whose
// channel connection dies fetches when it connects again; concurrent If-Match writes through the
// three replicas: exactly one wins, one commit on the remote, and all then serve the winner.
// Real port: a remote (the git server).
import { createHmac } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { createGitHttpServer, createRemoteRepo, PersonClone } from '../helpers/git-http-server.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')
const NO_TESTS = '?run-tests-first=false'
const WEBHOOK_SECRET = 'whsec-replicas-0123456789'

/** A signed GitHub push event for `after`, sent to one replica. */
function pushHook(s: InProcessServer, after: string) {
  const body = JSON.stringify({ ref: 'refs/heads/main', after, repository: { full_name: 'example/rules' } })
  return s.send('POST', '/hooks/git', body, {
    'Content-Type': 'application/json',
    'X-GitHub-Event': 'push',
    'X-GitHub-Delivery': `d-${after.slice(0, 8)}`,
    'X-Hub-Signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
  })
}
const simplePath = (id: string) => `simple_rules/${id.split('.')[0]!.toLowerCase()}/${id}.yml`

async function threeReplicas(t: { teardown(fn: () => unknown): void }) {
  const root = tempDir('rk-push-remote-')
  const git = await createGitHttpServer({ root })
  t.teardown(() => git.stop())
  const remote = await createRemoteRepo(root, 'rules', TEMPLATE)
  const url = await freshDatabase()
  const env = {
    RULEKEEPER_GIT_URL: git.url('rules'),
    RULEKEEPER_GIT_BRANCH: 'main',
    RULEKEEPER_GIT_WEBHOOK_SECRET: WEBHOOK_SECRET,
  }
  const start = async (replica: string) => {
    const s = await startInProcess({ env, config: { state: { postgres: { url }, replica } } })
    t.teardown(async () => {
      await s.close()
      fs.rmSync(s.dataDir, { recursive: true, force: true })
    })
    return s
  }
  const a = await start('rk-a')
  const b = await start('rk-b')
  const c = await start('rk-c')
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  return { a, b, c, git, remote, url }
}

/** Milliseconds until `s` answers `urlPath` as `ok` says (polled every 10 ms). */
async function msUntil(
  s: InProcessServer,
  urlPath: string,
  ok: (r: Awaited<ReturnType<InProcessServer['request']>>) => boolean,
) {
  const started = Date.now()
  await waitFor(`${urlPath} on the other replica`, async () => ok(await s.request('GET', urlPath)), 10_000, 10)
  return Date.now() - started
}

/** `s`'s reconciler as its /status shows it: whether a run is in progress, and its last run. */
async function reconciler(s: InProcessServer) {
  const body = (await s.request('GET', '/status')).body
  return {
    running: (body.conditions as Array<{ type: string; status: string }>).some(
      (c) => c.type === 'Reconciling' && c.status === 'True',
    ),
    lastRun: body.lastRun as { startedAt: string; durationMs: number; filesChanged: number } | null,
  }
}

/** Waits until none of `servers` runs a reconcile, each having run one started at `since` or later. */
async function settled(servers: InProcessServer[], since = 0) {
  await waitFor('every replica done reconciling', async () => {
    for (const s of servers) {
      const r = await reconciler(s)
      if (r.running || (since > 0 && !(Date.parse(r.lastRun?.startedAt ?? '') >= since))) return false
    }
    return true
  })
}

t.test('a rule written through one replica is served by the others within a second', async (t) => {
  t.setTimeout(120_000)
  const { a, b, c: third, git, url } = await threeReplicas(t)
  t.equal((await b.request('GET', '/simple-rules/Push.One')).status, 404, 'not there yet')
  // Each replica reconciles as its channel connects (at its start): done before the write, so the
  // interval measured below is the propagation alone.
  await settled([a, b, third])
  const written = await a.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Push.One'))
  t.equal(written.status, 200, written.text)
  // Both polled at once from the write's answer.
  const [msB, msC] = await Promise.all(
    [b, third].map((s) => msUntil(s, '/simple-rules/Push.One', (r) => r.status === 200)),
  )
  t.ok(msB! < 1000, `served by b after ${msB} ms`)
  t.ok(msC! < 1000, `served by c after ${msC} ms`)
  for (const s of [b, third])
    t.equal(
      (await s.request('GET', '/simple-rules/Push.One')).headers.get('etag'),
      written.headers.get('etag'),
      'the same ETag on every replica',
    )

  // A replica fetches whenever its channel connects again (what was announced meanwhile is lost):
  // a commit pushed past both replicas (no webhook, no announcement) is served once it reconnects.
  const c = await PersonClone.clone(git.url('rules'), { name: 'Plain Git', email: 'plain@example.com' })
  c.write(simplePath('Push.Two'), c.read(simplePath('Push.One'))!.replace(/Push\.One/g, 'Push.Two'))
  await c.commitAll('Add Push.Two with plain git')
  t.ok((await c.push()).ok, 'pushed past both replicas')
  t.equal((await b.request('GET', '/simple-rules/Push.Two')).status, 404, 'nothing told b of it')
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(() => admin.end())
  const channels = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'rulekeeper-revisions' ORDER BY pid",
      )
    ).rows.map((r) => r.pid)
  const before = await channels()
  t.equal(before.length, 3, 'one channel connection per replica')
  const terminated = Date.now()
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before])
  await msUntil(b, '/simple-rules/Push.Two', (r) => r.status === 200)
  await waitFor(
    'both channels connected again',
    async () => (await channels()).filter((pid) => !before.includes(pid)).length === 3,
  )
  t.pass('every channel connected again')
  // The reconciles of the reconnects, done before the webhook (not counted in its interval).
  await settled([a, b, third], terminated)

  // A push webhook reaching one replica reaches the other.
  c.write(simplePath('Push.Three'), c.read(simplePath('Push.One'))!.replace(/Push\.One/g, 'Push.Three'))
  const pushed = await c.commitAll('Add Push.Three with plain git')
  t.ok((await c.push()).ok)
  t.equal((await pushHook(a, pushed)).status, 202, 'the webhook went to a')
  const viaHook = await msUntil(b, '/simple-rules/Push.Three', (r) => r.status === 200)
  // Two reconciles in a row (a's fetch, then b's after the announcement): twice the bound of a write.
  t.ok(viaHook < 2000, `served by b ${viaHook} ms after a's webhook`)
})

t.test('concurrent If-Match writes through three replicas: exactly one wins', async (t) => {
  t.setTimeout(120_000)
  const { a, b, c, remote } = await threeReplicas(t)
  const created = await a.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Push.Race'))
  t.equal(created.status, 200, created.text)
  const etag = created.headers.get('etag')!
  for (const s of [b, c]) await msUntil(s, '/simple-rules/Push.Race', (r) => r.headers.get('etag') === etag)
  const before = await remote.head()
  const put = (s: InProcessServer, description: string) =>
    s.request('PUT', `/simple-rules/Push.Race${NO_TESTS}`, SAMPLE_BODIES.simple('Push.Race', { description }), {
      'If-Match': etag,
    })
  const answers = await Promise.all([put(a, 'through a'), put(b, 'through b'), put(c, 'through c')])
  t.same(answers.map((r) => r.status).sort(), [200, 412, 412], answers.map((r) => r.text).join(' / '))
  const winner = answers.find((r) => r.status === 200)!
  const after = await remote.head()
  t.equal((await remote.git('rev-list', '--count', `${before}..${after}`)).trim(), '1', 'one commit on the remote')
  for (const s of [a, b, c]) {
    const ms = await msUntil(s, '/simple-rules/Push.Race', (r) => r.headers.get('etag') === winner.headers.get('etag'))
    t.ok(ms < 1000, `the winner's ETag served after ${ms} ms`)
  }
})
