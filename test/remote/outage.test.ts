// With a remote: while the git server is down, writes answer 503 and leave no commit behind, reads
// keep working and /status says the remote is unreachable; recovery is automatic on the next write or
// reconcile. Wrong credentials: a Stalled condition with a clear reason and no retry storm.
// Real port: a remote (the git server, down and back).
import t from 'tap'
import { PersonClone } from '../helpers/git-http-server.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { condition, GIT_TOKEN, remoteWorld, simplePath, simpleRuleYaml, sleep } from './remote-fixture.js'

const hank = { name: 'Hank Direct', email: 'hank@example.com' }
const NO_TESTS = '?run-tests-first=false'

t.test('remote down: writes 503 without a trace, reads served, status unreachable, automatic recovery', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Outage.Before'))).status, 200)
  const remoteBefore = await w.remote.head()
  const localBefore = s.git('rev-parse', 'refs/heads/main').trim()
  t.equal(localBefore, remoteBefore)

  // A person with direct access to the remote's storage (not through HTTP) for commits while it is down.
  const direct = await PersonClone.clone(w.remote.gitdir, hank)

  let severity = 'HIGH'
  for (const cycle of ['recovered by a write', 'recovered by a reconcile']) {
    await w.git.stop()
    const writes: Array<[string, string, unknown]> = [
      ['POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Outage.During')],
      ['PUT', `/simple-rules/Outage.Before${NO_TESTS}`, SAMPLE_BODIES.simple('Outage.Before', { severity: 'LOW' })],
      ['DELETE', '/simple-rules/Outage.Before', undefined],
    ]
    for (const [method, p, body] of writes) {
      const started = Date.now()
      const res = await s.request(method, p, body)
      t.equal(res.status, 503, `${cycle}: ${method} while the remote is down is 503 (${res.text})`)
      t.type(res.body?.message, 'string')
      t.ok(Date.now() - started < 30_000, `${cycle}: ${method} fails fast enough (${Date.now() - started} ms)`)
    }
    const afterWrites = await s.request('GET', '/status')
    t.equal(
      afterWrites.body.remote?.reachable,
      false,
      `${cycle}: a failed write is enough for status to say unreachable`,
    )
    const localNow = s.git('rev-parse', 'refs/heads/main').trim()
    t.equal(
      (await s.request('GET', '/simple-rules/Outage.During')).status,
      404,
      `${cycle}: the refused create is not served`,
    )
    const before = await s.request('GET', '/simple-rules/Outage.Before')
    t.equal(before.status, 200, `${cycle}: reads keep working`)
    t.equal(before.body.severity, severity, `${cycle}: the refused update is not served`)
    t.equal((await s.request('GET', '/simple-rules?limit=1000')).status, 200)
    t.equal(
      (await s.request('POST', '/reconcile')).status,
      200,
      `${cycle}: a reconcile with the remote down still answers`,
    )
    const st = await s.request('GET', '/status')
    t.equal(st.status, 200)
    t.equal(st.body.remote?.reachable, false, `${cycle}: status says unreachable`)
    t.equal(st.body.remote?.url, w.git.url('rules'))
    t.equal(st.body.remote?.branch, 'main')
    t.equal(s.git('rev-parse', 'refs/heads/main').trim(), localNow, `${cycle}: the local branch is where it was`)
    t.equal(
      s.git('log', '--format=%s', '--grep', 'Rule-Id: Outage.During', 'refs/heads/main').trim(),
      '',
      `${cycle}: no commit of a refused write`,
    )

    // Meanwhile a person commits on the remote directly.
    const id = `Direct.${cycle === 'recovered by a write' ? 'One' : 'Two'}`
    await direct.git('pull', '-q', '--rebase', 'origin', 'main')
    direct.write(simplePath(id), simpleRuleYaml(id))
    const directCommit = await direct.commitAll(`Add ${id}`)
    t.ok((await direct.push()).ok)

    await w.git.start()
    if (cycle === 'recovered by a write') {
      const res = await s.request(
        'PUT',
        `/simple-rules/Outage.Before${NO_TESTS}`,
        SAMPLE_BODIES.simple('Outage.Before', { severity: 'MEDIUM' }),
      )
      t.equal(res.status, 200, `the first write after the remote is back succeeds (${res.text})`)
      const tip = await w.remote.head()
      t.equal(
        (await w.remote.git('rev-parse', `${tip}^`)).trim(),
        directCommit,
        'on top of what was committed meanwhile',
      )
      severity = 'MEDIUM'
    } else {
      const rec = await s.request('POST', '/reconcile')
      t.equal(rec.status, 200)
      t.equal(rec.body.lastAppliedRevision, directCommit, 'the next reconcile applies the remote tip')
    }
    const st2 = (await s.request('GET', '/status')).body
    t.equal(st2.remote?.reachable, true, `${cycle}: reachable again`)
    t.equal((await s.request('POST', '/reconcile')).body.lastAppliedRevision, await w.remote.head())
    t.equal((await s.request('GET', `/simple-rules/${id}`)).status, 200, `${cycle}: the direct commit is served`)
  }
  t.equal((await w.remote.git('rev-list', '--merges', '--count', 'main')).trim(), '0')
  t.equal(
    (await w.remote.git('log', '--format=%s', '--grep', 'Rule-Id: Outage.During', 'main')).trim(),
    '',
    'no refused write reached the remote',
  )
  t.equal((await s.request('GET', '/simple-rules/Outage.Before')).body.severity, 'MEDIUM')
})

t.test('wrong credentials: Stalled with a clear reason, writes refused, reads served, no retry storm', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const dataDir = tempDir()
  const good = await w.startServer({ dataDir })
  t.equal((await good.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Creds.Kept'))).status, 200)
  await good.close()
  const remoteTip = await w.remote.head()

  // Same data directory, a revoked token, the reconciler scheduled every second.
  const s = await w.startServer({
    dataDir,
    env: { RULEKEEPER_GIT_TOKEN: 'revoked-token-0000' },
    config: { reconcile: { schedule: '* * * * * *' } },
  })
  t.equal((await s.request('GET', '/simple-rules/Creds.Kept')).status, 200, 'reads are served from the local copy')
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  const st = (await s.request('GET', '/status')).body
  const stalled = condition(st, 'Stalled')
  t.equal(stalled?.status, 'True', `Stalled: ${JSON.stringify(stalled)}`)
  t.match(
    `${stalled?.reason} ${stalled?.message}`,
    /credential|authenticat|unauthori[sz]ed|401|403|token/i,
    'the reason names the credentials',
  )
  t.equal(st.lastAppliedRevision, remoteTip)

  const n0 = w.git.requests
  const write = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Creds.Refused'))
  t.equal(write.status, 503, `a write cannot be pushed: ${write.text}`)
  t.ok(w.git.requests - n0 <= 6, `one write makes a handful of requests, not a retry loop (${w.git.requests - n0})`)
  t.equal(
    s.git('log', '--format=%s', '--grep', 'Rule-Id: Creds.Refused', 'refs/heads/main').trim(),
    '',
    'no commit left behind',
  )
  t.equal(await w.remote.head(), remoteTip)

  const n1 = w.git.requests
  await sleep(5000) // wait: requests counted over 5 s of a per-second schedule
  const storm = w.git.requests - n1
  t.ok(storm <= 20, `over 5 s with a per-second schedule the git server saw ${storm} requests (bounded)`)
  const st2 = (await s.request('GET', '/status')).body
  t.equal(condition(st2, 'Stalled')?.status, 'True', 'still stalled: it needs a person')
  t.notMatch(JSON.stringify(st2), GIT_TOKEN)
  t.notMatch(JSON.stringify(st2), 'revoked-token-0000')
})
