// POST /hooks/git against hostile input (issue 11): a signature header of the wrong byte length is
// a 401 (never a 500), an unauthenticated caller is refused before its body is read, and a signed
// delivery seen before is acknowledged with 200 and runs nothing. Embedded mode: the webhook needs
// only its secret; a run is visible in /metrics.
// Real port: raw header bytes or lying lengths (a caller refused before its body is read).
import { createHmac } from 'node:crypto'
import http from 'node:http'
import t from 'tap'
import { rawRequest } from '../helpers/raw-http.js'
import { httpRequest, startTestServer, type TestServer } from '../helpers/rulekeeper.js'

const SECRET = 'webhook-secret-0123456789'
const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

async function server(t: { teardown(fn: () => unknown): void }): Promise<TestServer> {
  const s = await startTestServer({ env: { RULEKEEPER_GIT_WEBHOOK_SECRET: SECRET } })
  t.teardown(() => s.close())
  return s
}

async function runs(s: TestServer): Promise<number> {
  const text = (await httpRequest(s.url, 'GET', '/metrics')).text
  return [...text.matchAll(/^rulekeeper_reconcile_runs_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0)
}

async function waitRuns(s: TestServer, atLeast: number): Promise<number> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const n = await runs(s)
    if (n >= atLeast) return n
    if (Date.now() > deadline) throw new Error(`no reconcile run within 10 s (${n} < ${atLeast})`)
    await new Promise((r) => setTimeout(r, 50)) // wait: poll interval of a wait on a condition
  }
}

/** A POST with raw (latin1) header values, which fetch would refuse to send. */
async function rawPost(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: any }> {
  // A Buffer body (rawRequest sends a Buffer), so the header block is written apart from it as
  // latin1 (one byte per character).
  const res = await rawRequest(`${url}/hooks/git`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
    body: Buffer.from(body),
  })
  return { status: res.status, body: res.json }
}

/**
 * Sends the headers, then 64 KiB chunks of a body that never ends (backpressure-paced, capped at
 * 64 MiB) until the server answers; resolves with the status and how much had been written.
 */
function endlessPost(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; ms: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    let sent = 0
    let answered = false
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const req = http.request(
      `${url}/hooks/git`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        answered = true
        res.resume()
        resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, sent })
        req.destroy()
      },
    )
    req.on('error', (err) => (answered || sent > 0 ? undefined : reject(err)))
    const pump = () => {
      while (!answered && !req.destroyed && sent < 64 * 1024 * 1024) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
    }
    pump()
  })
}

t.test('a signature header of the wrong byte length is a 401, never a 500', async (t) => {
  const s = await server(t)
  t.equal(await runs(s), 0, 'no run yet (the test schedule is yearly)')
  const body = '{"ref":"refs/heads/main"}'
  const good = sign(body).slice('sha256='.length)
  const cases: Array<[string, Record<string, string>]> = [
    ['hub: 63 hex digits', { 'x-hub-signature-256': `sha256=${good.slice(0, 63)}` }],
    ['hub: 65 hex digits', { 'x-hub-signature-256': `sha256=${good}0` }],
    ['hub: 64 characters, one of them not ASCII', { 'x-hub-signature-256': `sha256=${good.slice(0, 63)}\u00e9` }],
    ['hub: nothing after the prefix', { 'x-hub-signature-256': 'sha256=' }],
    ['hub: upper-case hex', { 'x-hub-signature-256': `sha256=${good.toUpperCase()}` }],
    ['gitlab: shorter token', { 'x-gitlab-token': SECRET.slice(1) }],
    ['gitlab: longer token', { 'x-gitlab-token': `${SECRET}x` }],
    ['gitlab: as many characters as the secret, not ASCII', { 'x-gitlab-token': '\u00e9'.repeat(SECRET.length) }],
  ]
  for (const [what, headers] of cases) {
    const res = await rawPost(s.url, headers, body)
    t.equal(res.status, 401, what)
    t.type(res.body?.message, 'string', `${what}: a message`)
  }
  t.equal(await runs(s), 0, 'nothing ran')
})

t.test('an unauthenticated webhook is refused before its body is read', async (t) => {
  const s = await server(t)
  const cases: Array<[string, Record<string, string>, number]> = [
    ['no signature', {}, 401],
    ['a malformed signature', { 'x-hub-signature-256': 'sha256=zz' }, 401],
    ['a sha1 signature only', { 'x-hub-signature': `sha1=${'a'.repeat(40)}` }, 401],
    ['a wrong GitLab token', { 'x-gitlab-token': 'nope' }, 401],
  ]
  for (const [what, headers, status] of cases) {
    const res = await endlessPost(s.url, headers)
    t.equal(res.status, status, `${what}: ${status} while the body is still being sent`)
    t.ok(res.ms < 5000, `${what}: answered in ${res.ms} ms`)
  }
  const declared = (
    await rawRequest(`${s.url}/hooks/git`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': 100 * 1024 * 1024,
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: Buffer.alloc(1024),
      unfinished: true,
    })
  ).status
  t.equal(declared, 413, 'a well-formed signature with a declared 100 MiB body: 413 before reading it')
  const streamed = await endlessPost(s.url, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })
  t.equal(streamed.status, 413, 'a well-formed signature with an endless body: 413 once past 1 MiB')
  t.ok(streamed.sent < 16 * 1024 * 1024, `answered after ${streamed.sent} bytes were sent`)
  t.equal(await runs(s), 0, 'nothing ran')
})

t.test('a replayed signed delivery is acknowledged with 200 and runs nothing', async (t) => {
  const s = await server(t)
  const base = await runs(s)
  const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) })
  const headers = (delivery: string, b = body) => ({
    'Content-Type': 'application/json',
    'X-GitHub-Event': 'push',
    'X-GitHub-Delivery': delivery,
    'X-Hub-Signature-256': sign(b),
  })

  const first = await httpRequest(s.url, 'POST', '/hooks/git', body, headers('d-1'))
  t.equal(first.status, 202, first.text)
  const after1 = await waitRuns(s, base + 1)

  const again = await httpRequest(s.url, 'POST', '/hooks/git', body, headers('d-1'))
  t.equal(again.status, 200, 'the same delivery again')
  t.match(again.body.message, /already received/)
  const newId = await httpRequest(s.url, 'POST', '/hooks/git', body, headers('d-2'))
  t.equal(newId.status, 200, 'the same signed body under a fresh delivery id (the id is not signed) is a replay too')
  const noId = await httpRequest(s.url, 'POST', '/hooks/git', body, {
    'Content-Type': 'application/json',
    'X-Hub-Signature-256': sign(body),
  })
  t.equal(noId.status, 200, 'and without any delivery id')
  await new Promise((r) => setTimeout(r, 500)) // wait: no run starts within 500 ms
  t.equal(await runs(s), after1, 'no run for a replay')

  const forged = await httpRequest(s.url, 'POST', '/hooks/git', body, {
    ...headers('d-3'),
    'X-Hub-Signature-256': sign(body, 'not-the-secret'),
  })
  t.equal(
    forged.status,
    401,
    'a bad signature is a 401 even for a body seen before: the replay check comes after the signature',
  )
  const other = JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(40) })
  const fresh = await httpRequest(s.url, 'POST', '/hooks/git', other, headers('d-3', other))
  t.equal(fresh.status, 202, 'a new delivery still runs (a refused forgery did not burn its id)')
  await waitRuns(s, after1 + 1)

  const gl = {
    'Content-Type': 'application/json',
    'X-Gitlab-Event': 'Push Hook',
    'X-Gitlab-Token': SECRET,
    'X-Gitlab-Event-UUID': 'uuid-1',
  }
  t.equal((await httpRequest(s.url, 'POST', '/hooks/git', body, gl)).status, 202, 'GitLab delivery')
  t.equal((await httpRequest(s.url, 'POST', '/hooks/git', body, gl)).status, 200, 'the same GitLab delivery again')
})
