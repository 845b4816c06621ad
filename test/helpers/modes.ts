// Modes under a directory for the privacy tests: every entry (symbolic links skipped) with its
// permission bits, and the ones that are not private (a directory other than 0700, a file with
// any group or other bit).
import fs from 'node:fs'
import path from 'node:path'

export interface EntryMode {
  path: string
  dir: boolean
  mode: number
}

export function entryModes(root: string): EntryMode[] {
  const out: EntryMode[] = [{ path: '.', dir: true, mode: fs.statSync(root).mode & 0o7777 }]
  const visit = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const abs = path.join(dir, name)
      const st = fs.lstatSync(abs)
      if (st.isSymbolicLink()) continue
      out.push({ path: path.relative(root, abs), dir: st.isDirectory(), mode: st.mode & 0o7777 })
      if (st.isDirectory()) visit(abs)
    }
  }
  visit(root)
  return out
}

/** `path 0755` for every entry that is not private; empty when all are. */
export function notPrivate(root: string): string[] {
  return entryModes(root)
    .filter((e) => (e.dir ? e.mode !== 0o700 : (e.mode & 0o7077) !== 0))
    .map((e) => `${e.path} ${e.mode.toString(8).padStart(4, '0')}`)
}
