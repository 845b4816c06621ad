// Packed objects read through `git cat-file --batch` are byte for byte what isomorphic-git's pack
// reader gives, for every object of a packed repository with deltas; reads may overlap; a missing
// object is an error either way; a dead git process falls back to isomorphic-git transparently.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ObjectDb } from '../../src/git/object-db.js'
import { tempDir } from '../helpers/rulekeeper.js'

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}

/** A packed bare repository: 40 commits editing, moving and deleting files (so the pack has deltas). */
function packedRepo(): string {
  const root = tempDir('rk-catfile-')
  const work = path.join(root, 'w')
  const run = (...args: string[]) => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' })
  fs.mkdirSync(work)
  run('init', '-q', '-b', 'main')
  for (let i = 0; i < 40; i++) {
    const dir = path.join(work, `rules/g${i % 4}`)
    fs.mkdirSync(dir, { recursive: true })
    const body = Array.from(
      { length: 60 },
      (_, k) => `line ${k} of a long rule file, edited in commit ${k === i % 60 ? i : 0}`,
    ).join('\n')
    fs.writeFileSync(path.join(dir, `r${i % 7}.yml`), `RuleID: R${i % 7}\n${body}\n`)
    if (i % 9 === 8) fs.rmSync(path.join(work, `rules/g${(i + 1) % 4}`), { recursive: true, force: true })
    fs.writeFileSync(path.join(work, 'binary.bin'), Buffer.from(Array.from({ length: 300 }, (_, k) => (k * i) % 256)))
    run('add', '-A')
    run('commit', '-q', '--allow-empty', '-m', `commit ${i}\n\nbody ${'é'.repeat(i)}`)
  }
  const gitdir = path.join(root, 'bare.git')
  execFileSync('git', ['clone', '-q', '--bare', work, gitdir])
  execFileSync('git', ['--git-dir', gitdir, 'gc', '-q', '--aggressive'], { env })
  return gitdir
}

t.test('every object of a packed repository: git cat-file and isomorphic-git agree', async (t) => {
  const gitdir = packedRepo()
  const loose = execFileSync('git', ['--git-dir', gitdir, 'count-objects', '-v'], { encoding: 'utf8' })
  t.match(loose, /^count: 0$/m, 'no loose object: every read goes to the packs')
  const oids = execFileSync(
    'git',
    ['--git-dir', gitdir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
  t.ok(oids.length > 100, `${oids.length} objects`)
  const viaGit = new ObjectDb(gitdir, true)
  const viaIso = new ObjectDb(gitdir, false)
  t.teardown(() => viaGit.close())
  // All at once: the answers of the one git process are matched to their requests in order.
  const [a, b] = await Promise.all([
    Promise.all(oids.map((o) => viaGit.readObject(o))),
    Promise.all(oids.map((o) => viaIso.readObject(o))),
  ])
  let same = 0
  for (let i = 0; i < oids.length; i++) if (a[i]!.type === b[i]!.type && a[i]!.content.equals(b[i]!.content)) same++
  t.equal(same, oids.length, 'same type and bytes for every object')

  const missing = 'f'.repeat(40)
  await t.rejects(viaGit.readObject(missing), 'a missing object is an error through git')
  await t.rejects(viaIso.readObject(missing), 'and through isomorphic-git')
  t.same(await viaGit.readObject(oids[0]!), a[0], 'the reader still answers after a miss')

  const reader = (viaGit as unknown as { catFileReader: { broken: boolean } | null }).catFileReader
  t.ok(reader && !reader.broken, 'the reads went through one live git process')

  // The git process dies: reads go on (through isomorphic-git, or a new process).
  viaGit.close()
  const again = await viaGit.readObject(oids[oids.length - 1]!)
  t.ok(again.content.equals(b[oids.length - 1]!.content), 'reads after the process ended')
})
