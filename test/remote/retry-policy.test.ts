// The writer's retry policy when the tip moves under a write batch, made deterministic: a person
// pushes to the remote right before the service's own push (so the push is rejected for real, from
// the ref advertisement), for every attempt or only for attempts carrying several writes. Checks the
// precondition re-check on a rebuild (409), the time budget (503 in our words, nothing left behind),
// the split down to one write per attempt (progress while the remote keeps moving), a push the
// remote declines for good (503 at once), and the same budget for a local branch that keeps moving.
// The budget and the cap are long while the test lets attempts run (an attempt spawns several git
// processes: seconds on a loaded machine); once it has seen the attempts it wants, it spends them
// (sets them on the live policy, which a batch reads at each rejection), so the outcome does not
// depend on speed.
// Real port: a remote (the git server).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { RuleParts } from '../../src/service/index.js'
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../src/service/rule-writer.js'
import { RefConflictError } from '../../src/git/ref-cas.js'
import { PersonClone } from '../helpers/git-http-server.js'
import { SAMPLE_BODIES, startTestServer, type ApiResponse, type TestServer } from '../helpers/rulekeeper.js'
import { remoteWorld, simplePath, simpleRuleYaml, waitFor, type RemoteWorld } from './remote-fixture.js'

const NO_TESTS = '?run-tests-first=false'
const kim = { name: 'Kim Pusher', email: 'kim@example.com' }
/** Words of isomorphic-git and git that must never reach a caller. */
const LIBRARY_WORDING = /Push rejected|force: true|One or more branches|fast-forward|hook declined|refs\/heads/i

/** Gives the writer a policy of its own (the default with `p` over it) and returns it, live. */
function setPolicy(store: Pick<RuleParts, 'writer'>, p: Partial<RetryPolicy>): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...p }
  store.writer.policy = policy
  return policy
}

interface PushSpy {
  /** Writes (commits) carried by each push the service attempted, in order. */
  sizes: number[]
}

/**
 * Wraps the service's push: before each one for which `interfere(commits)` says so, `person` pushes
 * a commit of their own straight into the remote's storage, so the service's push finds the remote
 * moved. `edit(n)` is the person's n-th change.
 */
function interfere(
  _w: RemoteWorld,
  s: TestServer,
  person: PersonClone,
  when: (commits: number) => boolean | Promise<boolean>,
  edit: (n: number) => void,
): PushSpy {
  const remote = s.server.remote!
  const push = remote.push.bind(remote)
  const spy: PushSpy = { sizes: [] }
  let n = 0
  remote.push = async (commit: string, expected?: string | null) => {
    const commits = expected ? Number(s.git('rev-list', '--count', `${expected}..${commit}`).trim()) : 1
    spy.sizes.push(commits)
    if (await when(commits)) {
      await person.syncToRemote()
      edit(n++)
      await person.commitAll(`Person change ${n}`)
      const r = await person.push()
      if (!r.ok) throw new Error(`the person's push failed: ${r.stderr}`)
    }
    return push(commit, expected)
  }
  return spy
}

const GATE_ID = 'Gate.Rule'

/**
 * Queues the requests of `send()` so that they form one batch: the writer is held (busy with a no-op
 * PUT of GATE_ID, which must exist) while they queue up behind it.
 */
async function oneBatch(
  s: TestServer,
  expected: number,
  send: () => Array<Promise<ApiResponse>>,
): Promise<ApiResponse[]> {
  const store = s.server
  const writer = store.writer as unknown as { queue: unknown[]; running: boolean }
  let release!: () => void
  const gate = store.catalog.exclusive(() => new Promise<void>((r) => (release = r)))
  const noop = s.request('PUT', `/simple-rules/${GATE_ID}${NO_TESTS}`, SAMPLE_BODIES.simple(GATE_ID))
  await waitFor('the writer to hold the no-op', async () => writer.running && writer.queue.length === 0, 10_000, 5)
  const pending = send()
  await waitFor(`${expected} queued writes`, async () => writer.queue.length >= expected, 10_000, 5)
  release()
  await gate
  const n = await noop
  if (n.status !== 200) throw new Error(`the no-op PUT failed: ${n.text}`)
  return Promise.all(pending)
}

function requestIdsInHistory(log: string): Set<string> {
  return new Set([...log.matchAll(/^Request-Id: (.+)$/gm)].map((m) => m[1]!))
}

t.test('a rebuild re-checks preconditions: a create whose id a person pushed meanwhile is a 409', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const person = await PersonClone.clone(w.remote.gitdir, kim)
  const spy = interfere(
    w,
    s,
    person,
    () => spy.sizes.length === 1,
    () => person.write(simplePath('Retry.Contested'), simpleRuleYaml('Retry.Contested', 'the person was first')),
  )
  const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Retry.Contested'))
  t.equal(res.status, 409, res.text)
  t.match(res.body?.message, /Retry\.Contested/, 'the 409 names the id')
  t.same(spy.sizes, [1], 'one push, rejected; the rebuild had nothing left to push')
  const tip = await w.remote.head()
  t.equal(
    (await w.remote.git('log', '-1', '--format=%an', tip)).trim(),
    kim.name,
    'the remote tip is the person’s commit',
  )
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), tip, 'the local copy is at the remote tip')
  t.equal((await s.request('GET', '/simple-rules/Retry.Contested')).body?.description, 'the person was first')
})

/**
 * A server following a remote on which a person pushes an edit of Retry.Busy right before each
 * service push that `when` picks; the retry policy is the default with `policy` over it.
 */
async function busyRemote(
  t: Pick<typeof import('tap').default, 'equal' | 'teardown'>,
  policy: Partial<RetryPolicy>,
  when: (commits: number) => boolean | Promise<boolean>,
): Promise<{ w: RemoteWorld; s: TestServer; spy: PushSpy; policy: RetryPolicy }> {
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const live = setPolicy(s.server, policy)
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(GATE_ID))).status, 200)
  const person = await PersonClone.clone(w.remote.gitdir, kim)
  const spy = interfere(w, s, person, when, (n) =>
    person.write(simplePath('Retry.Busy'), simpleRuleYaml('Retry.Busy', `person edit ${n}`)),
  )
  return { w, s, spy, policy: live }
}

/** POSTs a simple rule for each id, all in one write batch. */
function postBatch(s: TestServer, ids: string[]): Promise<ApiResponse[]> {
  return oneBatch(s, ids.length, () =>
    ids.map((id) => s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))),
  )
}

t.test('a remote that keeps moving: after the budget, 503 in our words, and nothing left behind', async (t) => {
  t.setTimeout(120_000)
  // The budget runs out as the fourth attempt goes out: its rejection must end the batch.
  const { w, s, spy, policy } = await busyRemote(t, { budgetMs: 60_000 }, () => {
    if (spy.sizes.length === 4) policy.budgetMs = 0
    return true
  })

  const ids = ['Retry.A', 'Retry.B', 'Retry.C', 'Retry.D']
  const answers = await postBatch(s, ids)
  for (const [i, a] of answers.entries()) {
    t.equal(a.status, 503, `${ids[i]}: 503 (${a.text})`)
    t.match(
      a.body?.message,
      /^the remote http:\/\/127\.0\.0\.1:\d+\/rules\.git kept moving: retried 4 times in \d+\.\d s; the write was not made, try again$/,
    )
    t.notMatch(a.body?.message, LIBRARY_WORDING, 'no library wording')
  }
  t.same(
    spy.sizes,
    [4, 2, 1, 1],
    'each rejection halves the writes per attempt, down to one, and stays at one while nothing goes through; no attempt once the budget is spent',
  )

  const tip = await w.remote.head()
  const local = s.git('rev-parse', 'refs/heads/main').trim()
  const behind = await w.remote.git('merge-base', '--is-ancestor', local, tip).then(
    () => true,
    () => false,
  )
  t.ok(behind, 'the local branch is a commit of the remote (at or behind its tip), never ahead of it')
  const ours = answers.map((a) => a.headers.get('x-request-id')!)
  const remoteIds = requestIdsInHistory(await w.remote.git('log', '--format=%B', 'main'))
  const localIds = requestIdsInHistory(s.git('log', '--format=%B', 'refs/heads/main'))
  t.same(
    ours.filter((id) => remoteIds.has(id) || localIds.has(id)),
    [],
    'no refused write is in either history',
  )
  for (const id of ids) t.equal((await s.request('GET', `/simple-rules/${id}`)).status, 404, `${id} is not served`)

  // The remote calms down: the next write goes through at once.
  remoteIdle(s)
  const ok = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Retry.A'))
  t.equal(ok.status, 200, ok.text)
  t.equal(await w.remote.head(), s.git('rev-parse', 'refs/heads/main').trim())
})

/** Removes the interference: the service's own push again. */
function remoteIdle(s: TestServer): void {
  const remote = s.server.remote! as unknown as { push: unknown }
  delete remote.push
}

t.test('splitting makes progress while only single writes get through', async (t) => {
  t.setTimeout(120_000)
  // The remote moves under every attempt carrying more than one write.
  const { w, s, spy } = await busyRemote(t, { budgetMs: 30_000 }, (commits) => commits > 1)

  const ids = ['Split.A', 'Split.B', 'Split.C', 'Split.D']
  const answers = await postBatch(s, ids)
  t.same(
    answers.map((a) => a.status),
    [200, 200, 200, 200],
    'every write is made',
  )
  // 4 refused → 2 refused → 1 made → (doubled) 2 refused → 1 made → 2 refused → 1 made → 1 made.
  t.same(spy.sizes, [4, 2, 1, 2, 1, 2, 1, 1], 'halved on each rejection, doubled on each success')
  const log = await w.remote.git('log', '--format=%H %P%x1f%B%x1e', 'main')
  t.equal((await w.remote.git('rev-list', '--merges', '--count', 'main')).trim(), '0', 'no merge commits')
  const remoteIds = [...log.matchAll(/^Request-Id: (.+)$/gm)].map((m) => m[1]!)
  for (const a of answers)
    t.equal(
      remoteIds.filter((id) => id === a.headers.get('x-request-id')).length,
      1,
      'each acknowledged write is exactly one commit',
    )
  for (const id of ids) t.equal((await s.request('GET', `/simple-rules/${id}`)).status, 200, `${id} is served`)
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), await w.remote.head())
})

t.test('the cap bounds a batch that makes progress too slowly: the writes made are 200, the rest 503', async (t) => {
  t.setTimeout(120_000)
  // Several writes at once are refused; a single one goes through, but slowly (past the cap): the
  // cap, long until then, becomes the time the batch has taken so far (from its first push, so a
  // little less than from its start) as that single write is pushed. The budget (since the last
  // write made) stays long: only the cap, counted from the batch's start, can end it.
  let firstPushAt = 0
  const { w, s, spy, policy } = await busyRemote(t, { budgetMs: 60_000, capMs: 60_000 }, async (commits) => {
    firstPushAt ||= Date.now()
    if (commits > 1) return true
    await new Promise((r) => setTimeout(r, 1000)) // wait: the remote is slow on purpose
    policy.capMs = Date.now() - firstPushAt
    return false
  })
  const ids = ['Cap.A', 'Cap.B', 'Cap.C', 'Cap.D']
  const answers = await postBatch(s, ids)
  t.same(
    answers.map((a) => a.status),
    [200, 503, 503, 503],
    'the first write was made before the cap, the others not',
  )
  t.same(spy.sizes, [4, 2, 1, 2], 'refused, refused, made (slowly), refused: then the cap')
  t.match(
    answers[1]!.body?.message,
    /kept moving: retried 1 time in \d+\.\d s/,
    'the retries since the last write made',
  )
  const remoteIds = requestIdsInHistory(await w.remote.git('log', '--format=%B', 'main'))
  t.same(
    answers.map((a) => remoteIds.has(a.headers.get('x-request-id')!)),
    [true, false, false, false],
    'exactly the acknowledged write is in history',
  )
})

t.test('a push the remote declines for good (a pre-receive hook) is a 503 at once, in our words', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const before = await w.remote.head()
  const hook = path.join(w.remote.gitdir, 'hooks', 'pre-receive')
  fs.mkdirSync(path.dirname(hook), { recursive: true })
  fs.writeFileSync(hook, '#!/bin/sh\necho "GH006: Protected branch update failed for refs/heads/main." >&2\nexit 1\n', {
    mode: 0o755,
  })
  const remote = s.server.remote!
  const push = remote.push.bind(remote)
  let pushes = 0
  remote.push = (commit: string, expected?: string | null) => {
    pushes++
    return push(commit, expected)
  }
  const started = Date.now()
  const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Declined.Rule'))
  t.equal(res.status, 503, res.text)
  t.match(
    res.body?.message,
    /^the remote declined the update of branch main \(a server-side hook or branch protection\)/,
  )
  t.notMatch(res.body?.message, LIBRARY_WORDING, 'no library or server wording')
  t.equal(pushes, 1, 'not retried')
  t.ok(Date.now() - started < 10_000, `at once (${Date.now() - started} ms)`)
  t.equal(await w.remote.head(), before, 'the remote is unchanged')
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), before, 'no commit left behind')
  const st = await s.request('GET', '/status')
  t.equal(st.body.remote?.reachable, true, 'the remote was reached')
})

t.test('embedded: a local branch that keeps moving gets the same budget and a 503 in our words', async (t) => {
  t.setTimeout(60_000)
  const s = await startTestServer()
  t.teardown(() => s.close())
  const store = s.server
  const policy = setPolicy(store, { budgetMs: 60_000 })
  const before = s.git('rev-parse', 'refs/heads/main').trim()
  const repo = store.repo
  let moves = 0
  repo.moveBranch = async () => {
    moves++
    if (moves === 3) policy.budgetMs = 0 // the budget runs out: this rejection must end the batch
    throw new RefConflictError('refs/heads/main', before, 'somewhere else')
  }
  const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Embedded.Busy'))
  t.equal(res.status, 503, res.text)
  t.match(
    res.body?.message,
    /^the branch kept moving \(commits pushed into the repository\): retried 3 times in \d+\.\d s; the write was not made, try again$/,
  )
  t.equal(moves, 3, 'retried while the budget lasted, not once after')
  delete (repo as unknown as { moveBranch?: unknown }).moveBranch
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), before, 'the branch did not move')
  const ok = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Embedded.Busy'))
  t.equal(ok.status, 200, ok.text)
})
