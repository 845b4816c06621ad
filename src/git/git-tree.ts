// The tree object: entries (mode, name, oid) parsed from and serialized to Git's binary format.
export interface TreeEntry {
  mode: string
  name: string
  oid: string
}

export const TREE_MODE = '40000'

/**
 * Why a tree entry's name cannot be a path segment of a checkout, or undefined when it can: `.`,
 * `..`, `.git` in any case (git's own fsck refuses them as hasDot, hasDotdot, hasDotgit), empty,
 * or holding `/` or NUL. Plain git stores such trees when a push is not fsck-checked; the service
 * reports them and never reads or keeps them.
 */
export function badEntryName(name: string): string | undefined {
  if (name === '') return 'an empty name'
  if (name === '.' || name === '..') return `a path segment named ${JSON.stringify(name)}`
  if (name.toLowerCase() === '.git') return `a path segment named ${JSON.stringify(name)} (git's own folder)`
  if (name.includes('/') || name.includes('\0')) return `a name holding ${name.includes('/') ? '"/"' : 'NUL'}`
  return undefined
}
export const FILE_MODE = '100644'

export function parseTree(buf: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = []
  let i = 0
  while (i < buf.length) {
    const sp = buf.indexOf(0x20, i)
    const nul = buf.indexOf(0, sp)
    entries.push({
      mode: buf.subarray(i, sp).toString('latin1'),
      name: buf.subarray(sp + 1, nul).toString('utf8'),
      oid: buf.subarray(nul + 1, nul + 21).toString('hex'),
    })
    i = nul + 21
  }
  return entries
}

/** Git orders tree entries by name bytes, comparing a folder's name as if it ended with '/'. */
function treeSortKey(e: TreeEntry): Buffer {
  return Buffer.from(e.mode === TREE_MODE ? `${e.name}/` : e.name, 'utf8')
}

export function serializeTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(treeSortKey(a), treeSortKey(b)))
  return Buffer.concat(
    sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')])),
  )
}
