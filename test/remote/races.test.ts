// With a remote: ≥ 200 REST writes race ≥ 20 plain git pushes (each followed by a signed webhook) on
// overlapping rules, including ids that a person and the API try to create at the same moment.
// History stays linear with no merge commits, every acknowledged write and every accepted push is
// in it exactly once, exactly one side wins each contested create (the API's loss is a 409), and
// the served rules are the files at the remote tip.
// Real port: a remote (the git server).
import t from 'tap'
import { parse } from 'yaml'
import { PersonClone, type Person } from '../helpers/git-http-server.js'
import { SAMPLE_BODIES, type ApiResponse } from '../helpers/rulekeeper.js'
import { pushHook, remoteWorld, simplePath, simpleRuleYaml, sleep } from './remote-fixture.js'

const RACE_IDS = Array.from({ length: 8 }, (_, i) => `Race.R${i}`)
const CLASHES = 24
const API_CLIENTS = 12
const MIN_API_WRITES = 200
const MIN_PUSHES = 20
const PUSH_ATTEMPTS = 40
const PUSH_PAUSE_MS = 600
const NO_TESTS = '?run-tests-first=false'

interface ApiWrite {
  method: string
  id: string
  marker: string
  status: number
  requestId: string | null
  text: string
  ms: number
}

interface Push {
  who: string
  commit: string
  attempts: number
  /** Race ids whose file this push rewrote. */
  edited: string[]
  /** The contested id this push created, if it won it. */
  created: string | null
  /** The contested id this push found already created by someone else. */
  lost: string | null
}

const people: Person[] = [
  { name: 'Ivy Pusher', email: 'ivy@example.com' },
  { name: 'Jon Pusher', email: 'jon@example.com' },
]

t.test('REST writes racing plain pushes: linear history, nothing lost, contested creates answered 409', async (t) => {
  t.setTimeout(240_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  for (const id of RACE_IDS)
    t.equal(
      (await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id, { description: 'seed' }))).status,
      200,
    )

  const writes: ApiWrite[] = []
  const pushes: Push[] = []
  const hookStatuses: number[] = []
  let stopWriters = false
  let seq = 0

  async function apiWrite(method: 'POST' | 'PUT', id: string): Promise<ApiResponse> {
    const marker = `api-${seq++}`
    const p = method === 'POST' ? `/simple-rules${NO_TESTS}` : `/simple-rules/${id}${NO_TESTS}`
    const t0 = Date.now()
    const res = await s.request(method, p, SAMPLE_BODIES.simple(id, { description: marker }))
    writes.push({
      method,
      id,
      marker,
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      text: res.text.slice(0, 300),
      ms: Date.now() - t0,
    })
    return res
  }

  // Background API writers: PUTs on the shared ids until the pushes are done and enough writes were made.
  async function writer(): Promise<void> {
    for (let n = 0; n < 1000; n++) {
      if (stopWriters && writes.length >= MIN_API_WRITES) return
      await apiWrite('PUT', RACE_IDS[Math.floor(Math.random() * RACE_IDS.length)]!)
    }
  }

  /** One plain push: rewrite a shared rule's file and maybe create a contested id, retrying on rejection. */
  async function pushOnce(clone: PersonClone, n: number, contested: string | null): Promise<Push> {
    const edited = [RACE_IDS[Math.floor(Math.random() * RACE_IDS.length)]!]
    for (let attempt = 1; attempt <= PUSH_ATTEMPTS; attempt++) {
      await clone.syncToRemote()
      let created: string | null = null
      let lost: string | null = null
      for (const id of edited) clone.write(simplePath(id), simpleRuleYaml(id, `push-${clone.person.email}-${n}`))
      if (contested) {
        if (clone.read(simplePath(contested)) !== null) lost = contested
        else {
          clone.write(simplePath(contested), simpleRuleYaml(contested, `push-${clone.person.email}-${n}`))
          created = contested
        }
      }
      const commit = await clone.commitAll(`Push ${n} by ${clone.person.name}`)
      const r = await clone.push()
      if (r.ok) {
        const hook = await pushHook(s, commit)
        hookStatuses.push(hook.status)
        return { who: clone.person.email, commit, attempts: attempt, edited, created, lost }
      }
      if (!/rejected|fetch first|non-fast-forward|failed to (update|lock)|cannot lock/i.test(r.stderr))
        throw new Error(`push failed for another reason: ${r.stderr}`)
      await sleep(Math.random() * 50) // wait: random jitter (the race is the point)
    }
    throw new Error(`a push was rejected ${PUSH_ATTEMPTS} times in a row`)
  }

  const clones = await Promise.all(people.map((p) => PersonClone.clone(w.git.authUrl('rules'), p)))
  const started = Date.now()
  const writers = Array.from({ length: API_CLIENTS }, () => writer())

  // Contested creates: a person and the API create the same id at about the same moment.
  // One lane per person, side by side, so the two people also race each other.
  // A lane does not wait for its API POST before the next push: the POSTs are collected at the end.
  const contests: Array<{ id: string; api: ApiResponse; push: Push }> = []
  const pending: Array<Promise<void>> = []
  await Promise.all(
    clones.map(async (clone, lane) => {
      for (let j = lane; j < CLASHES; j += clones.length) {
        const id = `Clash.J${j}`
        // wait: random jitter (the race is the point)
        const api = sleep(Math.random() * 80).then(() => apiWrite('POST', id))
        const push = await pushOnce(clone, j, id)
        pushes.push(push)
        pending.push(api.then((res) => void contests.push({ id, api: res, push })))
        // People push every second or so, not back to back: the pushes spread over the writes.
        await sleep(PUSH_PAUSE_MS / 2 + Math.random() * PUSH_PAUSE_MS) // wait: random jitter (the race is the point)
      }
    }),
  )
  await Promise.all(pending)
  stopWriters = true
  const contestsDone = Date.now() - started
  await Promise.all(writers)
  t.comment(
    `${writes.length} API writes, ${pushes.length} pushes (${pushes.reduce((a, p) => a + p.attempts, 0)} attempts) in ${Date.now() - started} ms (pushes done after ${contestsDone} ms)`,
  )

  t.ok(writes.length >= MIN_API_WRITES, `at least ${MIN_API_WRITES} API writes (${writes.length})`)
  t.ok(pushes.length >= MIN_PUSHES, `at least ${MIN_PUSHES} plain pushes (${pushes.length})`)
  t.ok(
    hookStatuses.every((h) => h === 202),
    'every webhook was accepted',
  )

  // Every answer is one the contract allows: PUT on an existing id 200, POST 200 or 409.
  const bad = writes.filter((x) => !(x.method === 'PUT' ? [200] : [200, 409]).includes(x.status))
  for (const x of bad) t.comment(`refused write after ${x.ms} ms: ${x.method} ${x.id} → ${x.status} ${x.text}`)
  const slowest = writes.reduce((a, x) => Math.max(a, x.ms), 0)
  t.comment(`slowest write ${slowest} ms; median ${[...writes].sort((a, b) => a.ms - b.ms)[writes.length >> 1]?.ms} ms`)
  t.same(bad, [], 'no write failed for another reason')

  // Exactly one side creates each contested id; the API's loss is a 409 that names the id.
  for (const { id, api, push } of contests) {
    const apiWon = api.status === 200
    const pushWon = push.created === id
    t.ok(
      apiWon !== pushWon,
      `${id}: exactly one creator (API ${api.status}, push ${pushWon ? 'created' : 'found it existing'})`,
    )
    if (!apiWon) t.equal(api.status, 409, `${id}: the API's losing POST is a 409`)
    if (!pushWon) t.equal(push.lost, id)
  }
  t.ok(
    contests.some((c) => c.api.status === 409),
    'at least one contested create was answered 409',
  )

  // Settle: one reconcile so the index is at the remote tip.
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  const tip = await w.remote.head()
  t.equal(rec.body.lastAppliedRevision, tip, 'the index is at the remote tip')
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), tip, 'the local copy is at the remote tip')

  // Linear history, no merge commits.
  const log = (await w.remote.git('log', '--format=%H %P%x1f%B%x1e', 'main'))
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [ids, body] = r.split('\x1f') as [string, string]
      const [oid, ...parents] = ids.trim().split(' ')
      return { oid: oid!, parents, body }
    })
  t.same(
    log.filter((c) => c.parents.length > 1).map((c) => c.oid),
    [],
    'no merge commits',
  )
  t.equal(
    (await w.remote.git('rev-list', '--count', '--first-parent', 'main')).trim(),
    String(log.length),
    'the first-parent chain is the whole history',
  )

  // Nothing lost: each acknowledged write is exactly one commit; each refused one is none.
  const byRequest = new Map<string, number>()
  for (const c of log) {
    const m = /^Request-Id: (.+)$/m.exec(c.body)
    if (m) byRequest.set(m[1]!, (byRequest.get(m[1]!) ?? 0) + 1)
  }
  const acked = writes.filter((x) => x.status === 200)
  const missing = acked.filter((x) => byRequest.get(x.requestId ?? '') !== 1)
  t.same(
    missing.map((x) => `${x.method} ${x.id} ${x.requestId} → ${byRequest.get(x.requestId ?? '') ?? 0} commits`),
    [],
    'every acknowledged write is exactly one commit on the remote',
  )
  const refusedInHistory = writes.filter((x) => x.status !== 200 && byRequest.has(x.requestId ?? ''))
  t.same(
    refusedInHistory.map((x) => `${x.method} ${x.id} ${x.status}`),
    [],
    'no refused write is in history',
  )

  // Every accepted push is in history, as pushed (same commit id).
  const inHistory = new Set(log.map((c) => c.oid))
  t.same(
    pushes.filter((p) => !inHistory.has(p.commit)).map((p) => p.commit),
    [],
    'every accepted push is an ancestor of the tip',
  )

  // The served rules are the files at the tip; the last commit touching each file wins.
  for (const id of [...RACE_IDS, ...contests.map((c) => c.id)]) {
    const file = parse(await w.remote.git('show', `${tip}:${simplePath(id)}`)) as { Description?: string }
    const got = await s.request('GET', `/simple-rules/${id}`)
    t.equal(got.status, 200, `${id} is served`)
    t.equal(got.body?.description, file.Description, `${id}: served = file at the tip`)
  }
  for (const { id, push } of contests) {
    const got = await s.request('GET', `/simple-rules/${id}`)
    if (push.created === id)
      t.same(got.body?.createdBy, { id: push.who, type: 'user' }, `${id}: created by the person who won`)
    else t.equal(got.body?.createdBy?.type, 'api-token', `${id}: created by the API`)
  }
  const fsck = await w.remote.git('fsck', '--strict', '--no-progress', '--no-dangling').then(
    () => 'ok',
    (e: Error) => e.message,
  )
  t.equal(fsck, 'ok', 'the remote passes git fsck')
})
