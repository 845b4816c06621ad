// The persisted index: a restart reads `<data>/cache/index.ndjson` instead of re-reading every file
// and serves exactly what was served before (invalid files, duplicates and stale rules included);
// commits pushed while the service was down are applied on top of it incrementally; a torn, foreign
// or dangling snapshot is never trusted (full rebuild, same result); a missing history cache is
// rebuilt even when the index needs no change.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const who = {
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}
const NO_TESTS = '?run-tests-first=false'

function clone(gitdir: string): { dir: string; run(...args: string[]): string } {
  const dir = path.join(tempDir('rk-persisted-'), 'w')
  execFileSync('git', ['clone', '-q', gitdir, dir])
  return {
    dir,
    run: (...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...who } }),
  }
}

/** Everything a client can see of the rules: every rule of every kind (full representation) and the status. */
async function observable(s: InProcessServer): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const kind of ['simple-rules', 'scheduled-rules', 'correlation-rules']) {
    const res = await s.request('GET', `/${kind}?limit=1000`)
    if (res.status !== 200) throw new Error(`GET /${kind}: ${res.status} ${res.text}`)
    out[kind] = res.body.results
  }
  const st = (await s.request('GET', '/status')).body
  out.status = { lastAppliedRevision: st.lastAppliedRevision, invalidFiles: st.invalidFiles, staleRules: st.staleRules }
  return out
}

interface Started {
  s: InProcessServer
  lines: string[]
  loadedSnapshot: boolean
  fullBuild: boolean
}

async function start(dataDir: string): Promise<Started> {
  const lines: string[] = []
  const s = await startInProcess({ dataDir, logLines: lines })
  const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg)
  return {
    s,
    lines,
    loadedSnapshot: msgs.includes('loaded the persisted index'),
    fullBuild: msgs.includes('full index build done'),
  }
}

const SNAPSHOT = (dataDir: string) => path.join(dataDir, 'cache', 'index.ndjson')

/** A data dir whose index holds API-written rules, an invalid file, a duplicate id and a stale rule. */
async function prepared(
  t: Pick<typeof import('tap').default, 'ok' | 'equal' | 'same' | 'match'>,
): Promise<{ dataDir: string; before: Record<string, unknown>; head: string }> {
  const dataDir = tempDir('rk-persisted-data-')
  const first = await start(dataDir)
  t.ok(first.fullBuild, 'the first start builds the index from the files')
  const s = first.s
  for (let i = 0; i < 5; i++)
    t.equal((await s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(`Persist.R${i}`))).status, 200)
  t.equal(
    (await s.request('POST', `/correlation-rules${NO_TESTS}`, SAMPLE_BODIES.correlation('Persist.Corr'))).status,
    200,
  )
  const c = clone(s.gitdir)
  const file = path.join(c.dir, 'simple_rules/editor/Editor.Audit.LoginFailed.yml')
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Severity: Info', 'Severity: Info\n  bad: [indent'))
  fs.writeFileSync(
    path.join(c.dir, 'simple_rules/editor/copy.yml'),
    fs.readFileSync(path.join(c.dir, 'simple_rules/editor/Editor.Audit.LoginSucceeded.yml'), 'utf8'),
  )
  // Numbers JSON cannot hold must survive the snapshot (the detection text shows them).
  fs.writeFileSync(
    path.join(c.dir, 'simple_rules/editor/numbers.yml'),
    'AnalysisType: rule\nRuleID: Persist.Numbers\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\nDetection:\n  - KeyPath: a\n    Condition: Equals\n    Value: .inf\n  - KeyPath: b\n    Condition: IsIn\n    Values: [-.inf, .nan, -0, 1e400]\n',
  )
  c.run('add', '-A')
  c.run('commit', '-q', '-m', 'break one file, duplicate another')
  c.run('push', '-q', 'origin', 'HEAD:main')
  await s.request('POST', '/reconcile')
  const before = await observable(s)
  const st = before.status as { invalidFiles: unknown[]; staleRules: Array<{ id: string }> }
  t.equal(st.invalidFiles.length, 3, 'the broken file and both holders of the duplicated id are reported')
  t.same(
    st.staleRules.map((r) => r.id),
    ['Editor.Audit.LoginFailed'],
    'one rule served from its last good version',
  )
  const numbers = (before['simple-rules'] as Array<{ id: string; detection: string }>).find(
    (r) => r.id === 'Persist.Numbers',
  )
  t.match(
    numbers?.detection,
    /\.inf[\s\S]*-\.inf[\s\S]*\.nan[\s\S]*-0/,
    'infinite, NaN and -0 values are served as YAML has them',
  )
  await s.close()
  t.ok(fs.existsSync(SNAPSHOT(dataDir)), 'the index is persisted at shutdown')
  return { dataDir, before, head: c.run('rev-parse', 'HEAD').trim() }
}

t.test('a restart serves from the persisted index exactly what was served before', async (t) => {
  const { dataDir, before } = await prepared(t)
  const again = await start(dataDir)
  t.teardown(() => again.s.close())
  t.ok(again.loadedSnapshot, 'the persisted index is loaded')
  t.notOk(again.fullBuild, 'no file is re-read')
  t.same(await observable(again.s), before, 'rules, metadata, invalid files and stale rules are as before')
  const stale = await again.s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')
  t.equal(stale.status, 200)
  t.match(stale.body.warnings[0].message, /last valid version/, 'the last good version still serves across the restart')
  // Writes work on a loaded index (the draft overlays its maps).
  t.equal(
    (
      await again.s.request(
        'PUT',
        `/simple-rules/Persist.R1${NO_TESTS}`,
        SAMPLE_BODIES.simple('Persist.R1', { severity: 'LOW' }),
      )
    ).status,
    200,
  )
  t.equal((await again.s.request('GET', '/simple-rules/Persist.R1')).body.severity, 'LOW')
})

t.test('commits pushed while the service was down are applied on top of the persisted index', async (t) => {
  const { dataDir } = await prepared(t)
  const c = clone(path.join(dataDir, 'repo.git'))
  const rules = path.join(c.dir, 'simple_rules')
  const r2 = fs
    .readdirSync(rules, { recursive: true })
    .map(String)
    .find((f) => f.includes('Persist.R2'))!
  const r3 = fs
    .readdirSync(rules, { recursive: true })
    .map(String)
    .find((f) => f.includes('Persist.R3'))!
  fs.writeFileSync(
    path.join(rules, r2),
    fs.readFileSync(path.join(rules, r2), 'utf8').replace('Severity: High', 'Severity: Critical'),
  )
  fs.rmSync(path.join(rules, r3))
  fs.writeFileSync(
    path.join(rules, 'pushed.yml'),
    'AnalysisType: rule\nRuleID: Persist.Pushed\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\nDetection:\n  - KeyPath: a\n    Condition: Exists\n',
  )
  const login = path.join(rules, 'editor/Editor.Audit.LoginFailed.yml')
  fs.writeFileSync(login, fs.readFileSync(login, 'utf8').replace('  bad: [indent\n', ''))
  c.run('add', '-A')
  c.run('commit', '-q', '-m', 'changes while the service was down')
  c.run('push', '-q', 'origin', 'HEAD:main')

  const inc = await start(dataDir)
  t.ok(inc.loadedSnapshot, 'the persisted index is loaded')
  t.notOk(inc.fullBuild, 'only the changed files are read')
  const incremental = await observable(inc.s)
  t.equal(
    (incremental.status as { lastAppliedRevision: string }).lastAppliedRevision,
    c.run('rev-parse', 'HEAD').trim(),
  )
  const pushed = await inc.s.request('GET', '/simple-rules/Persist.Pushed')
  t.equal(pushed.status, 200)
  t.same(
    [pushed.body.createdBy, pushed.body.lastModifiedBy],
    [
      { id: 'pat@example.com', type: 'user' },
      { id: 'pat@example.com', type: 'user' },
    ],
    'metadata from the pushed commit',
  )
  t.equal((await inc.s.request('GET', '/simple-rules/Persist.R2')).body.severity, 'CRITICAL')
  t.equal((await inc.s.request('GET', '/simple-rules/Persist.R3')).status, 404)
  await inc.s.close()

  // The same revision built from scratch: identical (the broken file was fixed, so nothing is stale).
  fs.rmSync(SNAPSHOT(dataDir))
  const full = await start(dataDir)
  t.teardown(() => full.s.close())
  t.ok(full.fullBuild, 'without the snapshot the index is rebuilt')
  t.same(await observable(full.s), incremental, 'incremental on the persisted index = full rebuild')
})

t.test('an unusable persisted index is never trusted: the index is rebuilt with the same result', async (t) => {
  const { dataDir, before } = await prepared(t)
  const good = fs.readFileSync(SNAPSHOT(dataDir), 'utf8')
  const lines = good.split('\n')
  const header = JSON.parse(lines[0]!)
  const damaged: Array<[string, string]> = [
    ['torn in the middle (a crash while writing)', good.slice(0, Math.floor(good.length / 2))],
    ['the last line missing', `${lines.slice(0, -2).join('\n')}\n`],
    [
      'written by other code',
      [JSON.stringify({ ...header, fingerprint: 'f'.repeat(32) }), ...lines.slice(1)].join('\n'),
    ],
    ['another format', [JSON.stringify({ ...header, format: 'rulekeeper-index/0' }), ...lines.slice(1)].join('\n')],
    [
      'a revision the repository does not have',
      [JSON.stringify({ ...header, revision: '0123456789abcdef0123456789abcdef01234567' }), ...lines.slice(1)].join(
        '\n',
      ),
    ],
    ['not JSON', 'garbage\n'.repeat(10)],
    ['empty', ''],
  ]
  // A full rebuild cannot know the last good version of a file already broken before it: without
  // the snapshot the broken file's rule is not served (and correlation rules joining it warn).
  // The reference is the rebuild with no snapshot at all; every damaged snapshot must give it.
  fs.rmSync(SNAPSHOT(dataDir))
  const fresh = await start(dataDir)
  const reference = await observable(fresh.s)
  await fresh.s.close()
  t.ok(fresh.fullBuild, 'the reference is a full rebuild')
  t.same(
    (reference.status as { staleRules: unknown[] }).staleRules,
    [],
    'a full rebuild has no last good version to serve',
  )
  const paths = (o: Record<string, unknown>) =>
    (o.status as { invalidFiles: Array<{ path: string }> }).invalidFiles.map((f) => f.path)
  t.same(paths(reference), paths(before), 'the same invalid files (an unparsable file has no known id in a rebuild)')
  for (const [what, text] of damaged) {
    fs.writeFileSync(SNAPSHOT(dataDir), text)
    const s = await start(dataDir)
    try {
      t.notOk(s.loadedSnapshot, `${what}: not loaded`)
      t.ok(s.fullBuild, `${what}: rebuilt from the files`)
      t.same(await observable(s.s), reference, `${what}: same rules and reports as a rebuild`)
    } finally {
      await s.s.close()
    }
  }
})

t.test('a missing history cache is rebuilt even when the persisted index is current', async (t) => {
  const { dataDir, before } = await prepared(t)
  fs.rmSync(path.join(dataDir, 'cache', 'history.json'))
  const s = await start(dataDir)
  t.teardown(() => s.s.close())
  t.ok(s.loadedSnapshot)
  t.same(await observable(s.s), before, 'createdBy/lastModifiedBy are the same as before')
})
