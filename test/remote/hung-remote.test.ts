// A remote that accepts connections and then says nothing (a hung proxy, a stuck server) must not
// hold writes forever: after `git.remote.timeoutMs` without a byte the write answers 503, no commit
// is left behind, reads keep working, and writes succeed again once the remote answers.
// Real port: a remote (one that accepts and never answers).
import net from 'node:net'
import t from 'tap'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { remoteWorld } from './remote-fixture.js'

const NO_TESTS = '?run-tests-first=false'
const TIMEOUT_MS = 600

/** A TCP proxy to the git server that can be switched to swallow new connections silently. */
async function switchableProxy(
  target: URL,
): Promise<{ url(path: string): string; hang: boolean; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const state = { hang: false }
  const server = net.createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    if (state.hang) return // accepted, never answered
    const upstream = net.connect(Number(target.port), target.hostname)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as net.AddressInfo).port
  return {
    url: (p) => {
      const u = new URL(target.href)
      u.port = String(port)
      u.pathname = p
      return u.href
    },
    get hang() {
      return state.hang
    },
    set hang(v: boolean) {
      state.hang = v
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy()
        server.close(() => r())
      }),
  }
}

t.test('a remote that never answers: the write fails with 503 after the timeout, nothing is left behind', async (t) => {
  t.setTimeout(60_000)
  const w = await remoteWorld(t)
  const gitUrl = new URL(w.env.RULEKEEPER_GIT_URL!)
  const proxy = await switchableProxy(gitUrl)
  t.teardown(() => proxy.close())
  const s = await w.startServer({
    env: { RULEKEEPER_GIT_URL: proxy.url(gitUrl.pathname) },
    config: { git: { remote: { timeoutMs: TIMEOUT_MS } } },
  })
  t.equal(
    (await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hung.Before'))).status,
    200,
    'writes work through the proxy',
  )
  const headBefore = s.git('rev-parse', 'main').trim()

  proxy.hang = true
  const started = Date.now()
  const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hung.During'))
  const took = Date.now() - started
  t.equal(res.status, 503, 'the write is refused, not held')
  t.match(res.body.message, /cannot be reached/, 'in our own words')
  t.notMatch(res.text, /simple-get|Request timed out/, 'no library wording')
  t.ok(took >= TIMEOUT_MS, `it waited for the timeout (${took} ms)`)
  // Node's global agent would drop an idle socket after 5 s anyway; the configured timeout decides.
  t.ok(took < 4000, `the configured timeout decided, not a default (${took} ms)`)
  t.equal(s.git('rev-parse', 'main').trim(), headBefore, 'no commit left behind')
  t.equal((await s.request('GET', '/simple-rules/Hung.Before')).status, 200, 'reads keep working')
  t.equal((await s.request('GET', '/simple-rules/Hung.During')).status, 404)

  proxy.hang = false
  const after = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hung.After'))
  t.equal(after.status, 200, 'writes work again once the remote answers')
  t.equal(await w.remote.head(), s.git('rev-parse', 'main').trim(), 'the remote has the write')
})
