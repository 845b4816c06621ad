// Actor trailers are believed only on commits the service made (issue 27, finding 6): a plain-git
// commit pushed with `Actor-Id`/`Actor-Type` trailers naming the bootstrap token (or `system`) is
// attributed to its git author in createdBy/lastModifiedBy, the history and the actor filters,
// while the service's own commits (API writes, the template seed) keep their actor, across
// restarts and a cold rebuild of the history cache.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { gitAs } from '../helpers/git-as.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const MALLORY = { name: 'Mallory', email: 'mallory@example.com' }
const mallory = { id: MALLORY.email, type: 'user' }
const ruleFile = (id: string, extra = '') =>
  `AnalysisType: rule\nRuleID: ${id}\nEnabled: true\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\n${extra}` +
  'Detection:\n  - KeyPath: a\n    Condition: Equals\n    Value: b\n'

/** One plain-git commit by Mallory writing `files`, pushed to the server's repository and reconciled. */
async function pushAsMallory(s: InProcessServer, files: Record<string, string>, message: string): Promise<string> {
  const work = path.join(tempDir('rk-forge-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
    fs.writeFileSync(path.join(work, p), text)
  }
  gitAs(MALLORY, work, 'add', '-A')
  gitAs(MALLORY, work, 'commit', '-q', '-m', message)
  gitAs(MALLORY, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  if (rec.status !== 200) throw new Error(rec.text)
  return gitAs(MALLORY, work, 'rev-parse', 'HEAD').trim()
}

t.test('forged trailers on a pushed commit name its author, not the bootstrap token', async (t) => {
  const dataDir = tempDir('rk-forge-data-')
  let s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  const boot = (await s.request('GET', '/whoami')).body.id as string
  const token = { id: boot, type: 'api-token' }
  const made = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('Svc.Made'))
  t.equal(made.status, 200, made.text)
  const svcPath = s
    .git('ls-tree', '-r', '--name-only', 'main')
    .split('\n')
    .find((p) => p.includes('Svc.Made'))!
  const forgedCommit = await pushAsMallory(
    s,
    {
      'simple_rules/forged/Forged.Made.yml': ruleFile('Forged.Made'),
      [svcPath]: `${s.git('show', `main:${svcPath}`)}# edited by hand\n`,
    },
    `Add a rule\n\nRule-Id: Forged.Made\nRule-Kind: simple\nActor-Id: ${boot}\nActor-Type: api-token\nRequest-Id: r1\n`,
  )
  await pushAsMallory(
    s,
    { 'simple_rules/forged/Forged.System.yml': ruleFile('Forged.System') },
    'Initialize rules repository from template\n\nActor-Id: system\nActor-Type: system\n',
  )

  const check = async (when: string) => {
    const forged = (await s.request('GET', '/simple-rules/Forged.Made')).body
    t.same(forged.createdBy, mallory, `${when}: createdBy is the author`)
    t.same(forged.lastModifiedBy, mallory, `${when}: lastModifiedBy is the author`)
    t.same((await s.request('GET', '/simple-rules/Forged.System')).body.createdBy, mallory, `${when}: not system`)
    const svc = (await s.request('GET', '/simple-rules/Svc.Made')).body
    t.same(svc.createdBy, token, `${when}: the service's commit keeps its token`)
    t.same(svc.lastModifiedBy, mallory, `${when}: the hand edit is Mallory's`)
    const template = (await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')).body
    t.same(template.createdBy, { id: 'system', type: 'system' }, `${when}: the template seed is system's`)
    const history = (await s.request('GET', '/simple-rules/Forged.Made/history')).body.results
    t.same(
      history.map((h: { revision: string; actor: unknown }) => [h.revision, h.actor]),
      [[forgedCommit, mallory]],
      `${when}: the history names the author`,
    )
    const svcHistory = (await s.request('GET', '/simple-rules/Svc.Made/history')).body.results
    t.same(
      svcHistory.map((h: { actor: unknown }) => h.actor),
      [mallory, token],
    )
    const ids = async (q: string) =>
      (await s.request('GET', `/simple-rules?${q}`)).body.results.map((r: { id: string }) => r.id).sort()
    t.same(await ids(`created-by=${boot}`), ['Svc.Made'], `${when}: created-by the token: its own rule only`)
    t.same(await ids(`last-modified-by=${boot}`), [], `${when}: last-modified-by the token: none`)
    t.same(await ids('created-by=system').then((x) => x.includes('Forged.System')), false)
    t.same(await ids(`created-by=${MALLORY.email}`), ['Forged.Made', 'Forged.System'])
  }
  await check('served')
  await s.close()
  s = await startInProcess({ dataDir })
  await check('after a restart')
  await s.close()
  fs.rmSync(path.join(dataDir, 'cache'), { recursive: true, force: true })
  s = await startInProcess({ dataDir })
  await check('after a cold history build')
})
