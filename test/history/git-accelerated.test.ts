// A cold history build through `git log --raw` (the accelerator) and through the in-process tree
// walk give the same metadata for every rule, on a history with the awkward cases: a scheduled
// rule renamed within its folder, moves across folders, hidden and __pycache__ folders, a
// submodule, a mode-only change, a merge, delete and re-create, an empty commit, broken YAML,
// non-ASCII paths, a replace ref, and more commits than the progress threshold.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { HistoryTracker } from '../../src/service/history.js'
import { catchUpHistory } from '../../src/service/revision-sync.js'
import { GitRepository } from '../../src/git/repository.js'
import { tempDir } from '../helpers/rulekeeper.js'

function repoWithAwkwardHistory(): string {
  const work = path.join(tempDir('rk-gitlog-'), 'w')
  fs.mkdirSync(work)
  let n = 0
  const run = (...args: string[]) => {
    const who = n % 3 === 0 ? ['Ann', 'ann@example.com'] : ['Bo', 'bo@example.com']
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: who[0],
      GIT_AUTHOR_EMAIL: who[1],
      GIT_COMMITTER_NAME: who[0],
      GIT_COMMITTER_EMAIL: who[1],
      GIT_AUTHOR_DATE: `${1_700_000_000 + n * 60} +0000`,
      GIT_COMMITTER_DATE: `${1_700_000_000 + n * 60} +0000`,
    }
    return execFileSync('git', args, { cwd: work, env, encoding: 'utf8' })
  }
  const write = (p: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
    fs.writeFileSync(path.join(work, p), text)
  }
  const commit = (message: string) => {
    n++
    run('add', '-A')
    run('commit', '-q', '--allow-empty', '-m', message)
  }
  const rule = (id: string, extra = '') =>
    `AnalysisType: rule\nRuleID: ${id}\nDetection:\n  - KeyPath: a\n    Condition: Exists\n${extra}`
  const sched = (id: string, py: string) =>
    `AnalysisType: scheduled_rule\nRuleID: ${id}\nFilename: ${py}\nScheduledQueries: [Q]\n`

  run('init', '-q', '-b', 'main')
  write('rules/a.yml', rule('A'))
  write('sched/z.yml', sched('S', 'z.py'))
  write('sched/z.py', 'def rule(e):\n    return True\n')
  write('.github/rules/hidden.yml', rule('Hidden'))
  write('rules/__pycache__/cached.yml', rule('Cached'))
  write('rules/é x.yml', rule('Accent'))
  commit('initial')
  fs.renameSync(path.join(work, 'sched/z.yml'), path.join(work, 'sched/a.yml'))
  commit('rename the scheduled rule within its folder')
  write('sched/z.py', 'def rule(e):\n    return False\n')
  commit('python only')
  fs.mkdirSync(path.join(work, 'moved'))
  fs.renameSync(path.join(work, 'rules/a.yml'), path.join(work, 'moved/a.yml'))
  commit('move across folders')
  fs.chmodSync(path.join(work, 'moved/a.yml'), 0o755)
  fs.chmodSync(path.join(work, 'rules/é x.yml'), 0o755)
  commit('mode only')
  run('update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendored`)
  n++
  run('commit', '-q', '-m', 'a submodule')
  write('.github/rules/hidden.yml', rule('Hidden', 'Severity: High\n'))
  write('rules/__pycache__/cached.yml', rule('Cached', 'Severity: High\n'))
  commit('hidden folders only')
  commit('empty')
  run('checkout', '-q', '-b', 'side')
  write('rules/side.yml', rule('Side'))
  commit('on a side branch')
  write('rules/side.yml', rule('Side', 'Severity: Low\n'))
  commit('side again')
  run('checkout', '-q', 'main')
  write('rules/main-only.yml', rule('MainOnly'))
  commit('main moves on')
  n++
  run('merge', '-q', '--no-ff', '-m', 'merge side', 'side')
  fs.rmSync(path.join(work, 'moved/a.yml'))
  commit('delete A')
  write('rules/again.yml', rule('A'))
  commit('A again')
  write('rules/broken.yml', 'AnalysisType: rule\nRuleID: Broken\nDetection: [oops\n')
  commit('broken yaml')
  for (let i = 0; i < 210; i++) {
    write(`bulk/r${i % 17}.yml`, rule(`Bulk${i % 17}`, `Description: round ${i}\n`))
    if (i % 50 === 49) fs.rmSync(path.join(work, `bulk/r${i % 17}.yml`))
    commit(`bulk ${i}\n\nActor-Id: tok_${i % 3}\nActor-Type: api-token`)
  }
  const gitdir = path.join(path.dirname(work), 'bare.git')
  execFileSync('git', ['clone', '-q', '--bare', work, gitdir])
  execFileSync('git', ['--git-dir', gitdir, 'gc', '-q'])
  // A replace ref (which isomorphic-git, and so the in-process walk, ignores): git must ignore it too.
  const blob = (p: string) =>
    execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `main:${p}`], { encoding: 'utf8' }).trim()
  execFileSync('git', ['--git-dir', gitdir, 'replace', blob('rules/main-only.yml'), blob('rules/side.yml')])
  return gitdir
}

t.test('git log --raw and the in-process tree walk give the same history metadata', async (t) => {
  const gitdir = repoWithAwkwardHistory()
  const repo = await GitRepository.open(gitdir, 'main')
  t.teardown(() => repo.close())
  const head = (await repo.head())!
  const lines: string[] = []
  const logger = {
    info: (_o: object, m: string) => lines.push(m),
    warn: (_o: object, m: string) => lines.push(`WARN ${m}`),
  } as never

  // Both walks believe every commit's trailers here (as for commits the service made), so that
  // reading them is compared too.
  const walked = new HistoryTracker(null, () => true)
  await catchUpHistory(repo, walked, head, undefined, undefined, { gitBinary: false })
  const logged = new HistoryTracker(null, () => true)
  await catchUpHistory(repo, logged, head, logger, undefined, { gitBinary: true })
  t.ok(lines.includes('building history metadata (git log)'), 'the accelerated path ran')
  t.notOk(
    lines.some((l) => l.startsWith('WARN')),
    'without falling back',
  )

  const state = (h: HistoryTracker) => (h as unknown as { state: unknown }).state
  t.same(state(logged), state(walked), 'identical metadata, path map and .py ownership')
  t.equal(logged.head, head)
  // Spot checks that the walk itself is right, not merely equal.
  t.equal(walked.get('Hidden'), undefined, 'hidden folders are not rules')
  t.equal(walked.get('Cached'), undefined, '__pycache__ is not rules')
  t.ok(walked.get('Accent'), 'a non-ASCII path is followed')
  t.ok(walked.get('MainOnly'), 'the replace ref changes nothing')
  t.equal(
    walked.get('Accent')?.modified.commit,
    walked.get('Accent')?.created.commit,
    'a mode-only change modifies nothing',
  )
  const s = walked.get('S')!
  const log = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitdir, 'log', '--first-parent', '--format=%H', ...args], { encoding: 'utf8' })
      .trim()
      .split('\n')
  t.equal(s.modified.commit, log('-1', '--grep=python only')[0], 'the .py still belongs to the renamed rule')
  t.equal(walked.get('Side')?.created.commit, log('-1', '--grep=merge side')[0], 'a merge is one first-parent change')
  t.equal(walked.get('A')?.created.commit, log('-1', '--grep=A again')[0], 'deleted and re-created: a new life')
  t.equal(walked.get('Bulk3')?.modified.actor.type, 'api-token')
})
