// Branch reads and compare-and-swap updates with Git's own lock-file protocol: create
// `<ref>.lock` exclusively, check the old value, write, fsync, rename, fsync the folder. A plain
// `git push` into the same repository takes the same lock, so neither side can overwrite the other.
import type fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { RulekeeperError } from '../errors.js'
import { fsyncDir, renameDurable, writeSynced } from '../durable-file.js'

export class RefConflictError extends RulekeeperError {
  constructor(ref: string, expected: string | null, actual: string | null) {
    super('RefConflict', `branch ${ref} moved (expected ${expected ?? 'none'}, found ${actual ?? 'none'})`)
  }
}

function refFile(gitdir: string, ref: string): string {
  const file = path.join(gitdir, ref)
  if (!file.startsWith(path.join(gitdir, 'refs') + path.sep)) throw new Error(`bad ref name ${ref}`)
  return file
}

/** The commit a ref points at (loose ref first, then packed-refs), or null. */
export async function readRef(gitdir: string, ref: string): Promise<string | null> {
  try {
    const v = (await fsp.readFile(refFile(gitdir, ref), 'utf8')).trim()
    if (/^[0-9a-f]{40}$/.test(v)) return v
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  try {
    const packed = await fsp.readFile(path.join(gitdir, 'packed-refs'), 'utf8')
    for (const line of packed.split('\n')) {
      const m = /^([0-9a-f]{40}) (.+)$/.exec(line)
      if (m && m[2] === ref) return m[1]!
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  return null
}

/**
 * Moves `ref` from `expected` to `next` atomically, or throws RefConflictError. A lock held by
 * another writer (a push in progress) is waited for briefly, then reported as a conflict.
 */
export async function compareAndSwapRef(
  gitdir: string,
  ref: string,
  expected: string | null,
  next: string,
): Promise<void> {
  const file = refFile(gitdir, ref)
  const lock = `${file}.lock`
  await fsp.mkdir(path.dirname(file), { recursive: true })
  let fh: fsp.FileHandle | undefined
  for (let attempt = 0; ; attempt++) {
    try {
      fh = await fsp.open(lock, 'wx', 0o644)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 50) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST')
          throw new RefConflictError(ref, expected, 'locked by another writer')
        throw err
      }
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  let renamed = false
  try {
    const actual = await readRef(gitdir, ref)
    if (actual !== expected) throw new RefConflictError(ref, expected, actual)
    // The lock file is the temp file of durable-file's protocol: it had to be open before the check.
    const written = fh
    fh = undefined
    await writeSynced(written, `${next}\n`)
    // `renamed` is set before the folder's fsync: once renamed, a lock at that path is another writer's.
    await renameDurable(lock, file, false)
    renamed = true
    await fsyncDir(path.dirname(file))
  } finally {
    if (fh) await fh.close().catch(() => {})
    if (!renamed) await fsp.unlink(lock).catch(() => {})
  }
}

/**
 * After a crash our own `<ref>.lock` may be left behind; git would refuse every later update. At
 * start (we own the data directory) a lock older than `staleMs` is ours and is removed; a younger
 * one may be a push in progress and is waited for.
 */
export async function clearStaleRefLock(gitdir: string, ref: string, staleMs = 2000): Promise<boolean> {
  const lock = `${refFile(gitdir, ref)}.lock`
  for (;;) {
    let st: fs.Stats
    try {
      st = await fsp.stat(lock)
    } catch {
      return false
    }
    const age = Date.now() - st.mtimeMs
    if (age >= staleMs) {
      await fsp.unlink(lock).catch(() => {})
      return true
    }
    await new Promise((r) => setTimeout(r, Math.min(200, staleMs - age + 10)))
  }
}
