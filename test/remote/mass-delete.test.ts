// With a remote: a merged revision deleting 80% of the rules is not applied — the reconciler reports
// a Stalled condition with the reason and keeps serving the last applied revision — until a person
// confirms with POST /reconcile?allow-mass-delete=true. A small deletion applies as usual.
// Real port: a remote (the git server).
import t from 'tap'
import { condition, pushHook, remoteWorld, simplePath, simpleRuleYaml, waitApplied, waitFor } from './remote-fixture.js'

const gina = { name: 'Gina Cleanup', email: 'gina@example.com' }

t.test('a revision deleting 80% of the rules stalls until confirmed with allow-mass-delete', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const c = await w.clone(gina)

  // 5 template rules + 23 bulk rules = 28.
  const bulk = Array.from({ length: 23 }, (_, i) => `Bulk.Rule${String(i).padStart(2, '0')}`)
  for (const id of bulk) c.write(simplePath(id), simpleRuleYaml(id))
  const seeded = await c.commitAll('Add bulk rules')
  t.ok((await c.push()).ok)
  t.equal((await pushHook(s, seeded)).status, 202)
  await waitApplied(s, seeded)
  const count = async () => {
    let n = 0
    for (const kind of ['simple-rules', 'scheduled-rules', 'correlation-rules'])
      n += (await s.request('GET', `/${kind}?limit=1000`)).body.results.length
    return n
  }
  const total = await count()
  t.equal(total, 28)

  // A small deletion (3 of 28) applies normally.
  for (const id of bulk.slice(20)) c.remove(simplePath(id))
  const small = await c.commitAll('Remove three rules')
  t.ok((await c.push()).ok)
  t.equal((await pushHook(s, small)).status, 202)
  const stSmall = await waitApplied(s, small)
  t.equal(condition(stSmall, 'Stalled')?.status, 'False')
  t.equal(await count(), 25)

  // Deleting 20 of the 25 (80%).
  for (const id of bulk.slice(0, 20)) c.remove(simplePath(id))
  const mass = await c.commitAll('Remove almost everything')
  t.ok((await c.push()).ok)
  t.equal((await pushHook(s, mass)).status, 202)
  const stalled = await waitFor('a Stalled condition', async () => {
    const st = (await s.request('GET', '/status')).body
    return st?.lastAttemptedRevision === mass && condition(st, 'Stalled')?.status === 'True' ? st : undefined
  })
  const cond = condition(stalled, 'Stalled')!
  t.equal(stalled.lastAppliedRevision, small, 'the revision is not applied')
  t.ok(cond.reason && cond.reason !== 'None', `a reason: ${cond.reason}`)
  t.match(cond.message, /delet|remov/i, `the message says why: ${cond.message}`)
  t.match(cond.message, /\b20\b|80\s?%/, 'and how much would go')
  t.equal(await count(), 25, 'the rules keep being served')
  t.equal((await s.request('GET', '/simple-rules/Bulk.Rule00')).status, 200)

  // Another plain reconcile does not apply it either.
  const again = await s.request('POST', '/reconcile')
  t.equal(again.status, 200, again.text)
  t.equal(again.body.lastAppliedRevision, small)
  t.equal(condition(again.body, 'Stalled')?.status, 'True')
  t.equal((await s.request('GET', '/simple-rules/Bulk.Rule00')).status, 200)

  // A person confirms.
  const confirmed = await s.request('POST', '/reconcile?allow-mass-delete=true')
  t.equal(confirmed.status, 200, confirmed.text)
  t.equal(confirmed.body.lastAppliedRevision, mass)
  const st = (await s.request('GET', '/status')).body
  t.equal(st.lastAppliedRevision, mass)
  t.equal(condition(st, 'Stalled')?.status, 'False', 'no longer stalled')
  t.equal(await count(), 5)
  t.equal((await s.request('GET', '/simple-rules/Bulk.Rule00')).status, 404)
  t.equal((await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')).status, 200)
})
