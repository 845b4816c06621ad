// Per-rule history, diff and restore, and optimistic concurrency (api.md, "History, restore and
// optimistic concurrency"), against a real repository with plain-git commits mixed in: both lives of
// an id, a move, a pull request merged as its author's commit, restore byte for byte (with its
// trailer), restore of a deleted rule, restore whose tests fail, If-Match races, every kind.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { RULE_KINDS, kindDef } from '../../src/rules/kinds/index.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const person = (name: string, email: string, when: string) => ({
  ...process.env,
  GIT_AUTHOR_NAME: name,
  GIT_AUTHOR_EMAIL: email,
  GIT_AUTHOR_DATE: when,
  GIT_COMMITTER_NAME: 'GitHub',
  GIT_COMMITTER_EMAIL: 'noreply@github.com',
  GIT_COMMITTER_DATE: when,
})

function clone(s: InProcessServer) {
  const work = path.join(tempDir('rk-clone-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  const git = (args: string[], env?: NodeJS.ProcessEnv) =>
    execFileSync('git', args, { cwd: work, encoding: 'utf8', env })
  return {
    work,
    git,
    write: (p: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
      fs.writeFileSync(path.join(work, p), text)
    },
    read: (p: string) => fs.readFileSync(path.join(work, p), 'utf8'),
    commit: (msg: string, who: ReturnType<typeof person>) => {
      git(['add', '-A'])
      git(['commit', '-q', '-m', msg], who)
      return git(['rev-parse', 'HEAD']).trim()
    },
    push: async () => {
      git(['push', '-q', 'origin', 'HEAD:main'])
      const rec = await s.request('POST', '/reconcile')
      if (rec.status !== 200) throw new Error(rec.text)
    },
  }
}

const head = (s: InProcessServer) => s.git('rev-parse', 'main').trim()
const NO_TESTS = '?run-tests-first=false'

t.test('both lives of an id, a move, a merged pull request, diff, a revision, restore', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const alice = { 'X-API-Key': await s.makeToken('alice', ['View Rules', 'Manage Rules']) }
  const bob = { 'X-API-Key': await s.makeToken('bob', ['View Rules', 'Manage Rules']) }

  // Life 1: created and updated through the API.
  const c1 = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Hist.Life'), alice)
  t.equal(c1.status, 200, c1.text)
  const etag1 = c1.headers.get('etag')!
  t.match(etag1, /^"[0-9a-f]{40}"$/, 'the ETag is the blob id of the YAML file')
  const path1 = 'simple_rules/hist/Hist.Life.yml'
  t.equal(etag1, `"${s.git('rev-parse', `main:${path1}`).trim()}"`)
  const created = head(s)
  const got = await s.request('GET', '/simple-rules/Hist.Life')
  t.equal(got.headers.get('etag'), etag1, 'GET carries the same ETag')

  const u1 = await s.request('PUT', '/simple-rules/Hist.Life', SAMPLE_BODIES.simple('Hist.Life', { severity: 'LOW' }), {
    ...bob,
    'If-Match': etag1,
    'X-Change-Reason': 'too noisy, SEC-42',
  })
  t.equal(u1.status, 200, u1.text)
  const updated = head(s)
  t.not(u1.headers.get('etag'), etag1, 'a change changes the ETag')
  t.equal(u1.headers.get('etag'), (await s.request('GET', '/simple-rules/Hist.Life')).headers.get('etag'))

  // A stale If-Match: 412, nothing written.
  const stale = await s.request(
    'PUT',
    '/simple-rules/Hist.Life',
    SAMPLE_BODIES.simple('Hist.Life', { severity: 'HIGH' }),
    {
      'If-Match': etag1,
    },
  )
  t.equal(stale.status, 412, stale.text)
  t.match(stale.body.message, /changed meanwhile/)
  t.equal(head(s), updated, 'no commit')
  t.equal((await s.request('DELETE', '/simple-rules/Hist.Life', undefined, { 'If-Match': etag1 })).status, 412)
  t.equal(
    (await s.request('PUT', '/simple-rules/Hist.Life', SAMPLE_BODIES.simple('Hist.Life'), { 'If-None-Match': '*' }))
      .status,
    412,
    'If-None-Match: * on an existing rule',
  )
  t.equal(head(s), updated, 'still no commit')

  // Plain git: Dave moves the file; Erin's pull request (squash-merged: her commit) edits it.
  const c = clone(s)
  fs.mkdirSync(path.join(c.work, 'simple_rules/moved'), { recursive: true })
  c.git(['mv', path1, 'simple_rules/moved/Hist.Life.yml'])
  const moved = c.commit('Move Hist.Life', person('Dave', 'dave@example.com', '2026-01-03T00:00:00Z'))
  const p2 = 'simple_rules/moved/Hist.Life.yml'
  c.write(
    p2,
    c
      .read(p2)
      .replace(/^Description:.*$/m, '')
      .replace(/\nSeverity: .*\n/, '\nSeverity: Medium\n'),
  )
  const merged = c.commit(
    'Raise Hist.Life to medium (#7)\n\nAsked for by the SOC.',
    person('Erin Author', 'erin@example.com', '2026-01-04T00:00:00Z'),
  )
  await c.push()
  t.same((await s.request('GET', '/simple-rules/Hist.Life')).body.lastModifiedBy, {
    id: 'erin@example.com',
    type: 'user',
  })

  // Deleted through the API: the history stays readable.
  const cur = (await s.request('GET', '/simple-rules/Hist.Life')).headers.get('etag')!
  t.equal((await s.request('DELETE', '/simple-rules/Hist.Life', undefined, { 'If-Match': cur })).status, 204)
  const deleted = head(s)
  const h1 = await s.request('GET', '/simple-rules/Hist.Life/history')
  t.equal(h1.status, 200, h1.text)
  t.same(
    h1.body.results.map((e: { revision: string; change: string }) => [e.revision, e.change]),
    [
      [deleted, 'deleted'],
      [merged, 'updated'],
      [moved, 'moved'],
      [updated, 'updated'],
      [created, 'created'],
    ],
  )
  t.equal((await s.request('GET', '/scheduled-rules/Hist.Life/history')).status, 404, 'another kind: 404')

  // Life 2: re-created by bob.
  const c2 = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hist.Life'), bob)
  t.equal(c2.status, 200, c2.text)
  const recreated = head(s)
  const h = await s.request('GET', '/simple-rules/Hist.Life/history')
  const items = h.body.results as Array<Record<string, any>>
  t.same(
    items.map((e) => e.change),
    ['created', 'deleted', 'updated', 'moved', 'updated', 'created'],
    'both lives, newest first',
  )
  t.equal(h.body.next, null)
  const [life2, del, pr, mv, upd, life1] = items
  t.equal(life2!.revision, recreated)
  t.equal(life2!.parent, deleted)
  t.equal(life2!.actor.type, 'api-token')
  t.equal(life2!.authorName, 'bob')
  t.equal(upd!.reason, 'too noisy, SEC-42')
  t.equal(upd!.authorName, 'bob')
  t.equal(life1!.reason, null, 'a create without X-Change-Reason')
  t.equal(life1!.authorName, 'alice')
  t.same(mv!.actor, { id: 'dave@example.com', type: 'user' })
  t.same(mv!.paths, [path1, p2], 'a move lists both paths')
  t.equal(mv!.time, '2026-01-03T00:00:00.000Z')
  t.same(pr!.actor, { id: 'erin@example.com', type: 'user' }, 'the merged pull request is its author’s')
  t.equal(pr!.authorName, 'Erin Author')
  t.equal(pr!.reason, 'Asked for by the SOC.')
  t.same(del!.paths, [p2])

  // Pagination: newest first, two at a time, nothing repeated or skipped.
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const page: any = await s.request(
      'GET',
      `/simple-rules/Hist.Life/history?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    )
    t.equal(page.status, 200, page.text)
    seen.push(...page.body.results.map((e: { revision: string }) => e.revision))
    cursor = page.body.next
  } while (cursor)
  t.same(
    seen,
    items.map((e) => e.revision),
  )
  t.equal((await s.request('GET', '/simple-rules/Hist.Life/history?cursor=nope')).status, 400)
  t.equal((await s.request('GET', '/simple-rules/No.Such/history')).status, 404)

  // The rule at a revision: the resource shape with `revision` and the metadata of then.
  const v = await s.request('GET', `/simple-rules/Hist.Life/history/${updated}`)
  t.equal(v.status, 200, v.text)
  t.equal(v.body.revision, updated)
  t.equal(v.body.severity, 'LOW')
  t.equal(v.body.lastModified, upd!.time)
  t.equal(v.body.createdAt, life1!.time)
  t.equal((await s.request('GET', `/simple-rules/Hist.Life/history/${updated.slice(0, 10)}`)).body.revision, updated)
  t.equal((await s.request('GET', `/simple-rules/Hist.Life/history/${deleted}`)).status, 404, 'did not exist then')
  const root = s.git('rev-list', '--max-parents=0', 'main').trim()
  t.equal((await s.request('GET', `/simple-rules/Hist.Life/history/${root}`)).status, 404)
  t.equal((await s.request('GET', '/simple-rules/Hist.Life/history/zzz')).status, 400)

  // Diff between two revisions, and to the tip by default.
  const d = await s.request('GET', `/simple-rules/Hist.Life/diff?from=${created}&to=${updated}`)
  t.equal(d.status, 200, d.text)
  t.equal(d.body.from, created)
  t.equal(d.body.to, updated)
  t.equal(d.body.files.length, 1)
  t.equal(d.body.files[0].path, path1)
  t.match(
    d.body.files[0].unifiedDiff,
    /^--- a\/simple_rules\/hist\/Hist\.Life\.yml\n\+\+\+ b\/simple_rules\/hist\/Hist\.Life\.yml\n@@ /,
  )
  t.match(d.body.files[0].unifiedDiff, /\n-Severity: High\n\+Severity: Low\n/)
  const dm = await s.request('GET', `/simple-rules/Hist.Life/diff?from=${updated}&to=${moved}`)
  t.same(
    dm.body.files.map((f: { path: string; unifiedDiff: string }) => [f.path, f.unifiedDiff.split('\n')[0]]),
    [
      [path1, `--- a/${path1}`],
      [p2, '--- /dev/null'],
    ],
    'a move: the old path removed, the new one added',
  )
  const dt = await s.request('GET', `/simple-rules/Hist.Life/diff?from=${updated}`)
  t.equal(dt.body.to, head(s), 'to defaults to the tip')
  t.equal((await s.request('GET', '/simple-rules/Hist.Life/diff')).status, 400, 'from is required')

  // Restore of life 1's update: one commit, byte-identical files at their paths then, the trailer.
  const before = head(s)
  const r = await s.request('POST', `/simple-rules/Hist.Life/restore?revision=${updated}`, undefined, {
    'X-Change-Reason': 'back to LOW',
    'If-Match': (await s.request('GET', '/simple-rules/Hist.Life')).headers.get('etag')!,
  })
  t.equal(r.status, 200, r.text)
  t.equal(r.body.severity, 'LOW')
  t.equal(s.git('rev-parse', 'main~1').trim(), before, 'exactly one commit')
  t.equal(s.git('show', `main:${path1}`), s.git('show', `${updated}:${path1}`), 'byte-identical')
  t.equal(r.headers.get('etag'), `"${s.git('rev-parse', `main:${path1}`).trim()}"`)
  const msg = s.git('log', '-1', '--format=%B', 'main')
  t.match(
    msg,
    /^Restore simple rule Hist\.Life\n\nback to LOW\n\nRule-Id: Hist\.Life\nRule-Kind: simple\nActor-Id: tok_\w+\nActor-Type: api-token\nRequest-Id: \S+\nRestored-From: [0-9a-f]{40}\n/,
  )
  t.match(msg, new RegExp(`Restored-From: ${updated}\n`))
  const again = await s.request('POST', `/simple-rules/Hist.Life/restore?revision=${updated}`)
  t.equal(again.status, 200)
  t.equal(head(s), s.git('rev-parse', 'main').trim())
  t.equal(s.git('rev-parse', 'main~1').trim(), before, 'restoring what is there commits nothing')

  // Restore of a deleted rule re-creates it.
  t.equal((await s.request('DELETE', '/simple-rules/Hist.Life')).status, 204)
  const gone = head(s)
  const back = await s.request('POST', `/simple-rules/Hist.Life/restore?revision=${merged.slice(0, 12)}`)
  t.equal(back.status, 200, back.text)
  t.equal(s.git('rev-parse', 'main~1').trim(), gone)
  t.equal(s.git('show', `main:${p2}`), s.git('show', `${merged}:${p2}`), 'the moved file, byte for byte')
  t.equal((await s.request('GET', '/simple-rules/Hist.Life')).body.severity, 'MEDIUM')
  const last = (await s.request('GET', '/simple-rules/Hist.Life/history?limit=2')).body.results
  t.same(
    last.map((e: { change: string }) => e.change),
    ['created', 'deleted'],
  )
  t.equal(
    execFileSync('git', ['--git-dir', s.gitdir, 'fsck', '--strict'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    '',
  )
})

t.test('a restore whose tests fail is a 400 and writes nothing; run-tests-first=false restores it', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const failing = SAMPLE_BODIES.simple('Hist.Tests', {
    tests: [{ name: 'wrong', expectedResult: false, log: { eventName: 'ConsoleLogin' } }],
  })
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, failing)).status, 200)
  const bad = head(s)
  t.equal((await s.request('PUT', '/simple-rules/Hist.Tests', SAMPLE_BODIES.simple('Hist.Tests'))).status, 200)
  const before = head(s)
  const r = await s.request('POST', `/simple-rules/Hist.Tests/restore?revision=${bad}`)
  t.equal(r.status, 400, r.text)
  t.equal(r.body.testResults?.[0]?.passed, false)
  t.equal(head(s), before, 'nothing written')
  const forced = await s.request('POST', `/simple-rules/Hist.Tests/restore?revision=${bad}&run-tests-first=false`)
  t.equal(forced.status, 200, forced.text)
  t.equal(s.git('rev-parse', 'main~1').trim(), before)
})

t.test('If-Match races: two clients, one wins, the other gets 412, exactly one commit', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hist.Race'))).status, 200)
  for (let round = 0; round < 5; round++) {
    const etag = (await s.request('GET', '/simple-rules/Hist.Race')).headers.get('etag')!
    const before = head(s)
    const [a, b] = await Promise.all(
      ['a', 'b'].map((who) =>
        s.request(
          'PUT',
          `/simple-rules/Hist.Race${NO_TESTS}`,
          SAMPLE_BODIES.simple('Hist.Race', { description: `${who}${round}` }),
          {
            'If-Match': etag,
          },
        ),
      ),
    )
    t.same([a!.status, b!.status].sort(), [200, 412], `round ${round}: one wins`)
    t.equal(s.git('rev-parse', 'main~1').trim(), before, 'exactly one commit')
    const winner = a!.status === 200 ? a! : b!
    t.equal((await s.request('GET', '/simple-rules/Hist.Race')).body.description, winner.body.description)
  }
  // Two creates with If-None-Match: * : one 201, one 412.
  const creates = await Promise.all(
    [1, 2].map((n) =>
      s.request(
        'PUT',
        `/simple-rules/Hist.New${NO_TESTS}`,
        SAMPLE_BODIES.simple('Hist.New', { description: `n${n}` }),
        {
          'If-None-Match': '*',
        },
      ),
    ),
  )
  t.same(creates.map((r) => r.status).sort(), [201, 412])
  t.equal(
    (await s.request('PUT', '/simple-rules/Hist.New', SAMPLE_BODIES.simple('Hist.New'), { 'If-None-Match': '"x"' }))
      .status,
    400,
  )
  t.equal(
    (await s.request('PUT', '/simple-rules/Hist.New', SAMPLE_BODIES.simple('Hist.New'), { 'If-Match': 'nope' })).status,
    400,
  )
  t.equal((await s.request('DELETE', '/simple-rules/Hist.Gone', undefined, { 'If-Match': '*' })).status, 412)
  // A write racing a plain push into the repository is judged on the new tip, not on what was read.
  const etag = (await s.request('GET', '/simple-rules/Hist.Race')).headers.get('etag')!
  const c = clone(s)
  const p = 'simple_rules/hist/Hist.Race.yml'
  c.write(p, c.read(p).replace(/^Severity: .*$/m, 'Severity: Info'))
  c.commit('by hand', person('Gus', 'gus@example.com', '2026-02-01T00:00:00Z'))
  c.git(['push', '-q', 'origin', 'HEAD:main'])
  const pushed = head(s)
  const late = await s.request('PUT', `/simple-rules/Hist.Race${NO_TESTS}`, SAMPLE_BODIES.simple('Hist.Race'), {
    'If-Match': etag,
  })
  t.equal(late.status, 412, late.text)
  t.equal(head(s), pushed, 'nothing written over the push')
})

t.test('every kind has history, a revision, a diff and a restore (files byte for byte, companions too)', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const kind of RULE_KINDS) {
    const base = `/${kindDef(kind).apiPath}`
    const id = `Hist.Kind.${kind}`
    const body: Record<string, unknown> = SAMPLE_BODIES[kind as keyof typeof SAMPLE_BODIES](id)
    const c = await s.request('POST', `${base}${NO_TESTS}`, body)
    t.equal(c.status, 200, `${kind}: ${c.text}`)
    const first = head(s)
    const files = s.git('show', '--name-only', '--format=', first).trim().split('\n').sort()
    t.equal(c.headers.get('etag')?.split('-').length, files.length, `${kind}: one blob id per file`)
    const u = await s.request('PUT', `${base}/${id}${NO_TESTS}`, {
      ...body,
      description: 'changed',
      // Queries have no severity.
      ...('severity' in body ? { severity: 'LOW' } : {}),
    })
    t.equal(u.status, 200, u.text)
    const h = await s.request('GET', `${base}/${id}/history`)
    t.same(
      h.body.results.map((e: { change: string }) => e.change),
      ['updated', 'created'],
      kind,
    )
    t.same(h.body.results[1].paths, files)
    const past = (await s.request('GET', `${base}/${id}/history/${first}`)).body
    t.equal(past.severity, body.severity)
    t.equal(past.description ?? '', body.description ?? '', `${kind}: the first revision's description`)
    t.ok((await s.request('GET', `${base}/${id}/diff?from=${first}`)).body.files.length >= 1)
    const r = await s.request('POST', `${base}/${id}/restore?revision=${first}&run-tests-first=false`)
    t.equal(r.status, 200, r.text)
    for (const f of files) t.equal(s.git('show', `main:${f}`), s.git('show', `${first}:${f}`), `${kind}: ${f} restored`)
  }
})

t.test('the id → commits index survives a restart and is rebuilt cold the same', async (t) => {
  const dir = tempDir()
  let s = await startInProcess({ dataDir: dir })
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Hist.Keep'))).status, 200)
  t.equal(
    (
      await s.request(
        'PUT',
        `/simple-rules/Hist.Keep${NO_TESTS}`,
        SAMPLE_BODIES.simple('Hist.Keep', { severity: 'LOW' }),
      )
    ).status,
    200,
  )
  const before = (await s.request('GET', '/simple-rules/Hist.Keep/history')).body
  await s.close()
  s = await startInProcess({ dataDir: dir })
  t.same((await s.request('GET', '/simple-rules/Hist.Keep/history')).body, before, 'from the persisted cache')
  await s.close()
  fs.rmSync(path.join(dir, 'cache', 'history.json'))
  s = await startInProcess({ dataDir: dir })
  t.teardown(() => s.close())
  t.same((await s.request('GET', '/simple-rules/Hist.Keep/history')).body, before, 'rebuilt cold')
})
