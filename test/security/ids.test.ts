// Ids that cannot lie: each attack of issue 11 part 6 against the real service (in process) and a
// real git repository. Trailers cannot be forged through an id or a plain-git message; ids named like
// Object.prototype members survive a restart; ids that cannot round-trip or that deceive are 400s;
// ids are unique ignoring case; Windows reserved names never become path segments.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const NO_TESTS = '?run-tests-first=false'
const who = {
  GIT_AUTHOR_NAME: 'Mallory',
  GIT_AUTHOR_EMAIL: 'mallory@example.com',
  GIT_COMMITTER_NAME: 'Mallory',
  GIT_COMMITTER_EMAIL: 'mallory@example.com',
}

function clone(gitdir: string): { dir: string; run(...args: string[]): string } {
  const dir = path.join(tempDir('rk-ids-'), 'w')
  execFileSync('git', ['clone', '-q', gitdir, dir])
  return {
    dir,
    run: (...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...who } }),
  }
}

const ruleFile = (id: string) =>
  `AnalysisType: rule\nRuleID: ${JSON.stringify(id)}\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\nDetection:\n  - KeyPath: a\n    Condition: Equals\n    Value: b\n`

/** Pushes files (path → text) from a clone with a verbatim commit message. */
function pushFiles(s: InProcessServer, files: Record<string, string>, message: string): void {
  const c = clone(s.gitdir)
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(c.dir, p)), { recursive: true })
    fs.writeFileSync(path.join(c.dir, p), text)
  }
  const msgFile = path.join(path.dirname(c.dir), 'msg')
  fs.writeFileSync(msgFile, message)
  c.run('add', '-A')
  c.run('commit', '-q', '--cleanup=verbatim', '-F', msgFile)
  c.run('push', '-q', 'origin', 'HEAD:main')
}

const errorText = (body: any): string => JSON.stringify(body)
/** A test label with every non-ASCII character escaped (raw bidi or separator characters garble the output). */
const labelOf = (id: string): string =>
  JSON.stringify(id).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)

t.test('an id with U+2028/U+2029/U+0085 is refused, so it cannot forge an Actor-Id trailer', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const [sep, name] of [
    ['\u2028', 'U+2028'],
    ['\u2029', 'U+2029'],
    ['\u0085', 'U+0085'],
    ['\r', 'U+000D'],
  ]) {
    const id = `Forged.Rule${sep}Actor-Id: tok_forged`
    const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(res.status, 400, `${name}: 400`)
    t.match(errorText(res.body), name, `${name}: the message names the character`)
    const put = await s.request('PUT', `/simple-rules/${encodeURIComponent(id)}${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(put.status, 400, `${name}: 400 on PUT too`)
  }
  const list = await s.request('GET', '/simple-rules?created-by=tok_forged')
  t.equal(list.status, 200)
  t.same(list.body.results, [], 'nobody is attributed to the forged actor')
  t.equal(s.git('log', '--all', '--format=%B').includes('tok_forged'), false, 'no commit carries the forged text')
})

t.test('a plain-git commit with forged-looking trailers cannot spoof createdBy', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const cases: Array<[string, string]> = [
    ['Plain.Forged.LS', 'Add a rule\n\nRule-Id: Plain.Forged.LS\u2028Actor-Id: tok_forged\nActor-Type: api-token\n'],
    [
      'Plain.Forged.PS',
      'Add a rule\n\nRule-Id: Plain.Forged.PS\u2029Actor-Id: tok_forged\u2029Actor-Type: api-token\n',
    ],
    ['Plain.Forged.CR', 'Add a rule\n\nRule-Id: Plain.Forged.CR\rActor-Id: tok_forged\rActor-Type: api-token\n'],
    [
      'Plain.Forged.Body',
      'Add a rule\n\nActor-Id: tok_forged\nActor-Type: api-token\n\nSigned-off-by: Mallory <mallory@example.com>\n',
    ],
    ['Plain.Forged.Subject', 'Actor-Id: tok_forged\nActor-Type: api-token\n'],
  ]
  for (const [id, message] of cases) pushFiles(s, { [`simple_rules/plain/${id}.yml`]: ruleFile(id) }, message)
  t.equal((await s.request('POST', '/reconcile')).status, 200)
  for (const [id] of cases) {
    const res = await s.request('GET', `/simple-rules/${id}`)
    t.equal(res.status, 200, `${id} is served`)
    t.same(res.body.createdBy, { id: 'mallory@example.com', type: 'user' }, `${id}: the author, not the forged trailer`)
    t.same(res.body.lastModifiedBy, { id: 'mallory@example.com', type: 'user' })
  }
  const forged = await s.request('GET', '/simple-rules?created-by=tok_forged')
  t.same(forged.body.results, [], 'no rule is listed under the forged actor')
  // The same after a cold history build (no cache), with or without the git accelerator.
  await s.close()
  fs.rmSync(path.join(s.dataDir, 'cache'), { recursive: true, force: true })
  const again = await startInProcess({ dataDir: s.dataDir })
  t.teardown(() => again.close())
  for (const [id] of cases)
    t.same(
      (await again.request('GET', `/simple-rules/${id}`)).body.createdBy,
      { id: 'mallory@example.com', type: 'user' },
      `${id} after a cold build`,
    )
})

t.test('ids named like Object.prototype members survive a restart; every list filter answers 200', async (t) => {
  const dataDir = tempDir('rk-ids-proto-')
  const ids = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']
  let s = await startInProcess({ dataDir })
  for (const id of ids) {
    const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(res.status, 200, `${id} created`)
    t.equal(res.body.id, id)
  }
  const actor = (await s.request('GET', '/simple-rules/constructor')).body.createdBy
  t.equal(actor.type, 'api-token')
  const check = async (when: string) => {
    for (const id of ids) {
      const res = await s.request('GET', `/simple-rules/${encodeURIComponent(id)}`)
      t.equal(res.status, 200, `${when}: GET ${id}`)
      t.equal(res.body.id, id)
      t.same(res.body.createdBy, actor, `${when}: ${id} createdBy`)
      t.same(res.body.lastModifiedBy, actor, `${when}: ${id} lastModifiedBy`)
    }
    for (const q of [
      `created-by=${actor.id}`,
      `last-modified-by=${actor.id}`,
      'created-by=nobody',
      'last-modified-by=__proto__',
      'created-by=constructor',
    ]) {
      const res = await s.request('GET', `/simple-rules?limit=1000&${q}`)
      t.equal(res.status, 200, `${when}: list ${q}`)
      if (q.includes(actor.id))
        t.same(
          res.body.results
            .map((r: { id: string }) => r.id)
            .filter((i: string) => ids.includes(i))
            .sort(),
          [...ids].sort(),
          `${when}: ${q} lists them all`,
        )
    }
    const status = await s.request('GET', '/status')
    t.equal(status.status, 200)
    t.same(status.body.invalidFiles, [], `${when}: no invalid files`)
  }
  await check('before a restart')
  await s.close()
  s = await startInProcess({ dataDir })
  await check('after a restart')
  const upd = await s.request(
    'PUT',
    `/simple-rules/__proto__${NO_TESTS}`,
    SAMPLE_BODIES.simple('__proto__', { severity: 'LOW' }),
  )
  t.equal(upd.status, 200, '__proto__ can be changed')
  t.equal((await s.request('DELETE', '/simple-rules/constructor')).status, 204, 'constructor can be deleted')
  t.equal((await s.request('GET', '/simple-rules/constructor')).status, 404)
  await s.close()
  // A cold start (no persisted index, no history cache) gives the same.
  fs.rmSync(path.join(dataDir, 'cache'), { recursive: true, force: true })
  s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  t.equal((await s.request('GET', '/simple-rules/__proto__')).body.severity, 'LOW')
  t.same((await s.request('GET', '/simple-rules/toString')).body.createdBy, actor)
  t.equal((await s.request('GET', '/simple-rules/constructor')).status, 404)
  t.equal((await s.request('GET', `/simple-rules?created-by=${actor.id}`)).status, 200)
})

t.test('an id that cannot round-trip through UTF-8 (a lone surrogate) is a 400, never a ghost rule', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const id of ['Lone.\ud800.High', 'Lone.\udc00.Low', 'Lone.End\ud83d']) {
    const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(res.status, 400)
    t.match(errorText(res.body), /surrogate/i, 'the message says what is wrong')
  }
  // In a path the lone surrogate can only arrive as invalid UTF-8: never a 5xx, never a write.
  for (const method of ['PUT', 'GET', 'DELETE']) {
    const res = await s.request(
      method,
      `/simple-rules/Lone.%ED%A0%80${method === 'PUT' ? NO_TESTS : ''}`,
      method === 'PUT' ? SAMPLE_BODIES.simple('Lone.x') : undefined,
    )
    t.ok(res.status === 400 || res.status === 404, `${method} answers ${res.status}`)
  }
  t.same(
    (await s.request('GET', '/simple-rules?limit=1000')).body.results.filter((r: { id: string }) =>
      r.id.startsWith('Lone.'),
    ),
    [],
    'nothing was created',
  )
})

t.test('ids differing only by case are one id: 409 naming the existing one', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Case.Rule'))).status, 200)
  const post = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('case.rule'))
  t.equal(post.status, 409)
  t.match(post.body.message, 'Case.Rule', 'the message names the existing id')
  const put = await s.request('PUT', `/simple-rules/CASE.RULE${NO_TESTS}`, SAMPLE_BODIES.simple('CASE.RULE'))
  t.equal(put.status, 409)
  t.match(put.body.message, 'Case.Rule')
  const other = await s.request('POST', `/scheduled-rules${NO_TESTS}`, SAMPLE_BODIES.scheduled('case.RULE'))
  t.equal(other.status, 409, 'another kind too (the paths would collide on a case-insensitive disk)')
  t.match(other.body.message, 'Case.Rule')
  // Beyond ASCII: the fold is Unicode (locale-free) and covers forms that look alike.
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Straße.Ärger'))).status, 200)
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('STRASSE.ärger'))).status, 409)
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Long.\u017f'))).status, 200)
  t.equal(
    (await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('long.S'))).status,
    409,
    'the long s folds to s',
  )
  t.match(
    (await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Kelvin.\u212a'))).body.errors,
    [{ message: /NFC/ }],
    'the Kelvin sign is not NFC (it is K)',
  )
  // The exact id is still updated and deleted as usual.
  t.equal(
    (
      await s.request(
        'PUT',
        `/simple-rules/Case.Rule${NO_TESTS}`,
        SAMPLE_BODIES.simple('Case.Rule', { severity: 'LOW' }),
      )
    ).status,
    200,
  )
  t.equal((await s.request('DELETE', '/simple-rules/Case.Rule')).status, 204)
  t.equal(
    (await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('case.rule'))).status,
    200,
    'free again once the other is gone',
  )
  // Distinct ids whose sanitized file names differ only by case never get colliding paths.
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Path.A_b'))).status, 200)
  t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('path.a b'))).status, 200)
  const files = s.git('ls-tree', '-r', '--name-only', 'main').trim().split('\n')
  const folded = files.map((f) => f.toLowerCase())
  t.equal(new Set(folded).size, folded.length, 'no two paths of the tree differ only by case')
})

t.test('the repository side: paths or ids differing only by case are reported, not one silently winning', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  pushFiles(
    s,
    {
      'simple_rules/mixed/Twin.yml': ruleFile('Twin.Upper'),
      'simple_rules/mixed/twin.yml': ruleFile('Twin.Lower'),
      'simple_rules/mixed/a.yml': ruleFile('Repo.Case'),
      'simple_rules/mixed/b.yml': ruleFile('repo.case'),
    },
    'files that collide on case-insensitive disks\n',
  )
  const st = (await s.request('POST', '/reconcile')).body
  const invalid = new Map<string, string>(
    st.invalidFiles.map((f: { path: string; errors: Array<{ message: string }> }) => [
      f.path,
      f.errors.map((e) => e.message).join('; '),
    ]),
  )
  t.match(
    invalid.get('simple_rules/mixed/Twin.yml'),
    'simple_rules/mixed/twin.yml',
    'each colliding path names the other',
  )
  t.match(invalid.get('simple_rules/mixed/twin.yml'), 'simple_rules/mixed/Twin.yml')
  t.match(invalid.get('simple_rules/mixed/a.yml'), 'repo.case', 'each id names the other')
  t.match(invalid.get('simple_rules/mixed/b.yml'), 'Repo.Case')
  for (const id of ['Twin.Upper', 'Twin.Lower', 'Repo.Case', 'repo.case'])
    t.equal((await s.request('GET', `/simple-rules/${id}`)).status, 200, `${id} is still read`)
  const conflict = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('REPO.CASE'))
  t.equal(conflict.status, 409)
})

t.test(
  'Windows reserved names never become path segments; such files already in the repository are still read',
  async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const RESERVED = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?$/i
    for (const id of ['CON', 'nul.yml', 'Aux', 'com1.Rule', 'LPT9', 'prn.x.y', 'Trailing.']) {
      const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
      t.equal(res.status, 200, `${id} is created`)
      t.equal((await s.request('GET', `/simple-rules/${encodeURIComponent(id)}`)).body.id, id, `${id} reads back`)
    }
    t.equal(
      (await s.request('POST', `/scheduled-rules${NO_TESTS}`, SAMPLE_BODIES.scheduled('Con'))).status,
      409,
      'Con is CON ignoring case',
    )
    t.equal((await s.request('POST', `/scheduled-rules${NO_TESTS}`, SAMPLE_BODIES.scheduled('aux.Sched'))).status, 200)
    const files = s.git('ls-tree', '-r', '--name-only', 'main').trim().split('\n')
    for (const f of files) {
      for (const seg of f.split('/')) {
        t.notOk(RESERVED.test(seg), `${f}: segment ${seg} is not a reserved name`)
        t.notOk(/[. ]$/.test(seg), `${f}: segment ${seg} does not end in a dot or space`)
      }
    }
    // A file already in the repository under such a name is read and edited in place, not dropped.
    pushFiles(s, { 'simple_rules/con/nul.yml': ruleFile('Legacy.In.Con') }, 'a rule written on Linux\n')
    t.equal((await s.request('POST', '/reconcile')).status, 200)
    t.equal((await s.request('GET', '/simple-rules/Legacy.In.Con')).status, 200)
    t.equal(
      (
        await s.request(
          'PUT',
          `/simple-rules/Legacy.In.Con${NO_TESTS}`,
          SAMPLE_BODIES.simple('Legacy.In.Con', { severity: 'LOW' }),
        )
      ).status,
      200,
    )
    t.match(s.git('show', 'main:simple_rules/con/nul.yml'), /Severity: Low/, 'updated in place')
  },
)

t.test('bidi controls, zero-width characters, BOMs and other deceptive ids are a 400 naming the problem', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const bad: Array<[string, RegExp]> = [
    ['Admin.\u202eLogin', /U\+202E/],
    ['Admin.\u202aLogin', /U\+202A/],
    ['Admin.\u200eLogin', /U\+200E/],
    ['Admin.\u200fLogin', /U\+200F/],
    ['Admin.\u2066Login\u2069', /U\+2066/],
    ['Admin.\u2067Login', /U\+2067/],
    ['Admin.Lo\u200bgin', /U\+200B/],
    ['Admin.Lo\u200cgin', /U\+200C/],
    ['Admin.Lo\u200dgin', /U\+200D/],
    ['Admin.Lo\u2060gin', /U\+2060/],
    ['\ufeffAdmin.Login', /U\+FEFF/],
    ['Admin.Lo\u00adgin', /U\+00AD/],
    ['Admin.\u00a0Login', /U\+00A0/],
    ['Admin.\u3000Login', /U\+3000/],
    ['Admin.Lo\u0009gin', /U\+0009/],
    ['Admin.Log\ufffdin', /U\+FFFD/],
    ['Cafe\u0301.Login', /NFC/],
  ]
  for (const [id, why] of bad) {
    const label = labelOf(id)
    const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(res.status, 400, `${label}: POST 400`)
    t.match(errorText(res.body), why, `${label}: the message names the problem`)
    t.match(res.body.errors?.[0]?.path, '/id')
    const put = await s.request('PUT', `/simple-rules/${encodeURIComponent(id)}${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(put.status, 400, `${label}: PUT 400`)
    t.match(errorText(put.body), why)
  }
  // Ids that were accepted before and deceive nobody still are.
  for (const id of [
    'AWS.Root.Login',
    'Ünïcode.Rüle',
    'Café.Login',
    'with space.inside',
    'a/b',
    '😀.Rule',
    'x:y@z+1',
    '日本.ルール',
  ]) {
    const res = await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(id))
    t.equal(res.status, 200, `${labelOf(id)} is still accepted`)
    t.equal((await s.request('GET', `/simple-rules/${encodeURIComponent(id)}`)).status, 200)
  }
  // A repository file with a deceptive RuleID is reported (with the same reason), not served.
  pushFiles(s, { 'simple_rules/x/bidi.yml': ruleFile('Repo.\u202eBidi') }, 'a deceptive id\n')
  const st = (await s.request('POST', '/reconcile')).body
  const entry = st.invalidFiles.find((f: { path: string }) => f.path === 'simple_rules/x/bidi.yml')
  t.ok(entry, 'the file is reported')
  t.match(JSON.stringify(entry), /U\+202E/)
})
