// The first-parent history of a branch with each commit's changed files, from one
// `git log --raw` run: the accelerator repository.md allows for a cold history build. It lists
// exactly what diffTrees (tree-diff.ts) finds between a commit and its first parent: files only,
// no submodules, nothing inside hidden or __pycache__ folders, no entry whose blob did not change.
import { execFile } from 'node:child_process'
import { gitEnv } from './git-binary.js'
import { skipFolder, SUBMODULE_MODE, type FileDiff } from './tree-diff.js'

export interface LoggedCommit {
  oid: string
  changes: FileDiff[]
}

const ZERO = '0000000000000000000000000000000000000000'

/** diffTrees never descends into these folders (at any depth). */
function insideSkippedFolder(p: string): boolean {
  const parts = p.split('/')
  for (let i = 0; i < parts.length - 1; i++) if (skipFolder(parts[i]!)) return true
  return false
}

/**
 * Parses `git log -z --raw --format=%x01%H` output: `\x01<commit>\0` per commit, then (after a
 * newline, when the commit changed files) `:<modes> <oids> <status>\0<path>\0` per file.
 */
function parseRawLog(out: Buffer): LoggedCommit[] {
  const commits: LoggedCommit[] = []
  let i = 0
  const until = (byte: number): string => {
    const end = out.indexOf(byte, i)
    if (end === -1) throw new Error('git log output ended inside a record')
    const s = out.toString('utf8', i, end)
    i = end + 1
    return s
  }
  while (i < out.length) {
    if (out[i] === 0x0a || out[i] === 0x00) {
      i++
      continue
    }
    if (out[i] !== 0x01) throw new Error(`unexpected byte ${out[i]} in git log output`)
    i++
    const oid = until(0)
    if (!/^[0-9a-f]{40}$/.test(oid)) throw new Error('git log output has no commit id where one belongs')
    const c: LoggedCommit = { oid, changes: [] }
    for (;;) {
      while (out[i] === 0x0a || out[i] === 0x00) i++
      if (out[i] !== 0x3a) break // ':' starts a raw entry
      i++
      const [oldMode, newMode, oldOid, newOid] = until(0).split(' ')
      const path = until(0)
      const from = oldOid === ZERO || oldMode === SUBMODULE_MODE ? null : oldOid!
      const to = newOid === ZERO || newMode === SUBMODULE_MODE ? null : newOid!
      if (from === to || insideSkippedFolder(path)) continue
      c.changes.push({ path, oldOid: from, newOid: to })
    }
    commits.push(c)
  }
  return commits
}

/** Every commit of the first-parent chain ending at `to`, oldest first, with its changed files. */
export function firstParentLog(gitdir: string, to: string): Promise<LoggedCommit[]> {
  const args = [
    '--git-dir',
    gitdir,
    'log',
    '--first-parent',
    '--diff-merges=first-parent',
    '--root',
    '--raw',
    '--no-renames',
    '--no-abbrev',
    '-z',
    '--reverse',
    '--format=%x01%H',
    to,
  ]
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { env: gitEnv(), encoding: 'buffer', maxBuffer: 2 ** 31 - 1, timeout: 10 * 60_000 },
      (err, stdout) => {
        if (err) return reject(err)
        try {
          resolve(parseRawLog(stdout))
        } catch (e) {
          reject(e)
        }
      },
    )
  })
}
