// A merged pull request is credited to the authors of the commits it merged (issue 31, part 5): a
// real `git merge --no-ff` of a branch with commits by Ann and Bob, merged by Mona with GitHub's
// message, names Ann (most commits) in createdBy/lastModifiedBy and the history, Mona as mergedBy,
// and "<title> (#N)" as the reason — live and after a cold rebuild. The merged commits are exactly
// what `git rev-list M^1..M^2` lists, also when main was merged into the branch meanwhile.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { mergedCommits } from '../../src/git/merged-commits.js'
import { GitRepository } from '../../src/git/repository.js'
import { gitAs, type Person } from '../helpers/git-as.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const ANN: Person = { name: 'Ann', email: 'ann@example.com' }
const BOB: Person = { name: 'Bob', email: 'bob@example.com' }
const CARL: Person = { name: 'Carl', email: 'carl@example.com' }
const MONA: Person = { name: 'Mona', email: 'mona@example.com' }
const user = (p: Person) => ({ id: p.email, type: 'user' })
const at = (p: Person, day: number): Person => ({ ...p, date: `2026-02-${String(day).padStart(2, '0')}T10:00:00Z` })

const ruleFile = (id: string, description: string) =>
  `AnalysisType: rule\nRuleID: ${id}\nDescription: ${description}\nEnabled: true\nSeverity: Low\n` +
  'LogTypes: [AWS.CloudTrail]\nDetection:\n  - KeyPath: a\n    Condition: Equals\n    Value: b\n'

function write(work: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(work, rel)), { recursive: true })
  fs.writeFileSync(path.join(work, rel), text)
}

function commit(work: string, who: Person, message: string): string {
  gitAs(who, work, 'add', '-A')
  gitAs(who, work, 'commit', '-q', '-m', message)
  return gitAs(who, work, 'rev-parse', 'HEAD').trim()
}

t.test('a merged pull request credits the authors of its commits, the merger apart', async (t) => {
  const dataDir = tempDir('rk-merge-credit-')
  let s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  const work = path.join(tempDir('rk-merge-work-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  const A = 'simple_rules/pr/Merge.A.yml'
  gitAs(ANN, work, 'checkout', '-q', '-b', 'feature')
  write(work, A, ruleFile('Merge.A', 'first draft'))
  commit(work, at(ANN, 1), 'Add Merge.A')
  write(work, A, ruleFile('Merge.A', 'reviewed'))
  commit(work, at(BOB, 2), 'Review Merge.A')
  // main moves meanwhile, and is merged into the branch (bookkeeping, not authorship).
  gitAs(CARL, work, 'checkout', '-q', 'main')
  write(work, 'simple_rules/pr/Carl.Own.yml', ruleFile('Carl.Own', 'on main'))
  const carls = commit(work, at(CARL, 3), 'Add Carl.Own')
  gitAs(ANN, work, 'checkout', '-q', 'feature')
  gitAs(at(ANN, 4), work, 'merge', '-q', '--no-ff', 'main', '-m', "Merge branch 'main' into feature")
  write(work, A, ruleFile('Merge.A', 'final'))
  commit(work, at(ANN, 5), 'Polish Merge.A')
  gitAs(MONA, work, 'checkout', '-q', 'main')
  gitAs(
    at(MONA, 6),
    work,
    ...['merge', '-q', '--no-ff', 'feature', '-m', 'Merge pull request #42 from ann/feature'],
    ...['-m', 'Tighten the login rule'],
  )
  const merge = gitAs(MONA, work, 'rev-parse', 'HEAD').trim()
  gitAs(MONA, work, 'push', '-q', 'origin', 'main')
  t.equal((await s.request('POST', '/reconcile')).status, 200)

  const check = async (when: string) => {
    const rule = (await s.request('GET', '/simple-rules/Merge.A')).body
    t.same(rule.createdBy, user(ANN), `${when}: created by the PR's author, not the merger`)
    t.same(rule.lastModifiedBy, user(ANN), `${when}: last modified by the PR's author`)
    const h = (await s.request('GET', '/simple-rules/Merge.A/history')).body.results
    t.equal(h.length, 1, `${when}: one first-parent commit changed it: the merge`)
    t.match(h[0], {
      revision: merge,
      actor: user(ANN),
      authorName: 'Ann',
      mergedBy: user(MONA),
      authors: [user(ANN), user(BOB)],
      reason: 'Tighten the login rule (#42)',
      change: 'created',
    })
    const carl = (await s.request('GET', '/simple-rules/Carl.Own/history')).body.results
    t.same(
      carl.map((e: { revision: string; actor: unknown }) => [e.revision, e.actor]),
      [[carls, user(CARL)]],
      `${when}: main's own commit stays Carl's`,
    )
  }
  await check('live')
  await s.close()
  fs.rmSync(path.join(dataDir, 'cache'), { recursive: true, force: true })
  s = await startInProcess({ dataDir })
  await check('after a cold rebuild')
})

t.test('the merged commits are what git rev-list M^1..M^2 lists', async (t) => {
  const root = tempDir('rk-merged-commits-')
  const work = path.join(root, 'w')
  fs.mkdirSync(work)
  gitAs(ANN, work, 'init', '-q', '-b', 'main')
  let day = 1
  const step = (who: Person, file: string) => {
    write(work, file, `${day}\n`)
    return commit(work, at(who, day++), `change ${file}`)
  }
  step(ANN, 'base')
  gitAs(ANN, work, 'checkout', '-q', '-b', 'f')
  step(ANN, 'f1')
  gitAs(ANN, work, 'checkout', '-q', 'main')
  step(CARL, 'm1')
  gitAs(ANN, work, 'checkout', '-q', 'f')
  step(BOB, 'f2')
  gitAs(at(ANN, day++), work, 'merge', '-q', '--no-ff', 'main', '-m', 'sync')
  gitAs(ANN, work, 'checkout', '-q', 'main')
  step(CARL, 'm2')
  gitAs(ANN, work, 'checkout', '-q', 'f')
  step(ANN, 'f3')
  gitAs(ANN, work, 'checkout', '-q', 'main')
  gitAs(at(MONA, day++), work, 'merge', '-q', '--no-ff', 'f', '-m', 'Merge pull request #1 from ann/f')
  const repo = await GitRepository.open(path.join(work, '.git'), 'main')
  t.teardown(() => repo.close())
  const m = await repo.readCommit(gitAs(ANN, work, 'rev-parse', 'HEAD').trim())
  const ours = (await mergedCommits(repo.db, m)).map((c) => c.oid).sort()
  const theirs = gitAs(ANN, work, 'rev-list', 'HEAD^1..HEAD^2').trim().split('\n').sort()
  t.same(ours, theirs)
  t.equal(ours.length, 4, 'f1, f2, the sync merge, f3')
  t.same(await mergedCommits(repo.db, await repo.readCommit(m.parents[0]!)), [], 'not a merge: nothing')
})
