// The merge base (git/merge-base.ts) against `git merge-base --all` itself, over every pair of
// commits of a seeded random history with branches and merges (and committer dates out of order, as
// clock skew leaves them), plus the answers for the same commit, an ancestor, and unrelated roots.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { mergeBase } from '../../src/git/merge-base.js'
import { GitRepository } from '../../src/git/repository.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { mulberry32 } from '../helpers/seeded-random.js'

function gitIn(dir: string, date: number, ...args: string[]): string {
  const stamp = `${1_700_000_000 + date * 60} +0000`
  const r = spawnSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ann',
      GIT_AUTHOR_EMAIL: 'ann@example.com',
      GIT_COMMITTER_NAME: 'Ann',
      GIT_COMMITTER_EMAIL: 'ann@example.com',
      GIT_AUTHOR_DATE: stamp,
      GIT_COMMITTER_DATE: stamp,
    },
  })
  if (r.status !== 0 && !(args[0] === 'merge-base' && r.status === 1))
    throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

t.test('every pair of a random history with merges and skewed clocks: as git merge-base answers', async (t) => {
  const work = tempDir('rk-merge-base-')
  gitIn(work, 0, 'init', '-q', '-b', 'b0')
  const rnd = mulberry32(31)
  const branches = ['b0']
  const commits: string[] = []
  let n = 0
  const commitOn = (branch: string) => {
    if (commits.length) gitIn(work, n, 'checkout', '-q', branch)
    fs.writeFileSync(path.join(work, `f${n}`), `${n}\n`)
    gitIn(work, n, 'add', '.')
    // One commit in five is dated before its parent (a skewed clock).
    const date = rnd() < 0.2 ? n - 30 : n
    gitIn(work, date, 'commit', '-q', '-m', `c${n}`)
    n++
    commits.push(gitIn(work, n, 'rev-parse', 'HEAD'))
  }
  commitOn('b0')
  for (let step = 0; step < 30; step++) {
    const r = rnd()
    const branch = branches[Math.floor(rnd() * branches.length)]!
    if (r < 0.2 && branches.length < 5) {
      const name = `b${branches.length}`
      gitIn(work, n, 'checkout', '-q', '-b', name, branch)
      branches.push(name)
      commitOn(name)
    } else if (r < 0.4 && branches.length > 1) {
      const other = branches.find((b) => b !== branch)!
      gitIn(work, n, 'checkout', '-q', branch)
      gitIn(work, n++, 'merge', '-q', '--no-ff', '-m', `merge ${other}`, other)
      commits.push(gitIn(work, n, 'rev-parse', 'HEAD'))
    } else commitOn(branch)
  }
  const repo = await GitRepository.open(path.join(work, '.git'), 'b0')
  t.teardown(() => repo.close())
  let pairs = 0
  let several = 0
  for (let i = 0; i < commits.length; i += 3)
    for (let j = 1; j < commits.length; j += 4) {
      const a = commits[i]!
      const b = commits[j]!
      const all = gitIn(work, n, 'merge-base', '--all', a, b).split('\n').filter(Boolean)
      const ours = await mergeBase(repo, a, b)
      if (all.length > 1) several++
      // Several best common ancestors (criss-cross merges): git's own `merge-base` picks one of them.
      t.ok(ours !== null && all.includes(ours), `${a.slice(0, 7)} ${b.slice(0, 7)}: ${ours} in [${all}]`)
      pairs++
    }
  t.ok(pairs > 50, `${pairs} pairs compared (${several} with several best common ancestors)`)
})

t.test('the same commit, an ancestor, unrelated roots, and the walk limit', async (t) => {
  const work = tempDir('rk-merge-base-')
  gitIn(work, 0, 'init', '-q', '-b', 'main')
  const commit = (i: number) => {
    fs.writeFileSync(path.join(work, `f${i}`), `${i}\n`)
    gitIn(work, i, 'add', '.')
    gitIn(work, i, 'commit', '-q', '-m', `c${i}`)
    return gitIn(work, i, 'rev-parse', 'HEAD')
  }
  const first = commit(1)
  commit(2)
  const tip = commit(3)
  gitIn(work, 4, 'checkout', '-q', '--orphan', 'other')
  const root = commit(5)
  const repo = await GitRepository.open(path.join(work, '.git'), 'main')
  t.teardown(() => repo.close())
  t.equal(await mergeBase(repo, tip, tip), tip)
  t.equal(await mergeBase(repo, first, tip), first, 'an ancestor is the merge base')
  t.equal(await mergeBase(repo, tip, first), first)
  t.equal(await mergeBase(repo, tip, root), null, 'no common history')
  t.equal(await mergeBase(repo, tip, first, 1), null, 'past the limit: none')
})
