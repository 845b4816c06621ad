// Builds a new root tree from an old one and a set of file changes, touching only the trees on
// the changed paths (O(depth) objects per change, never the whole tree). Empty folders vanish, as
// in Git. New objects go into the caller's batch; nothing is written here. A tree that is rewritten
// loses any entry whose name no checkout can hold (`..`, `.git`, …: git-tree.ts badEntryName).
import { badEntryName, FILE_MODE, serializeTree, TREE_MODE, type TreeEntry } from './git-tree.js'
import type { ObjectDb } from './object-db.js'
import type { ObjectBatch } from './write-object-loose.js'

/** path → new content, or null to delete. Paths are repository-relative with '/' separators. */
export type FileChanges = Map<string, Buffer | null>

export async function editTree(
  db: ObjectDb,
  batch: ObjectBatch,
  rootTree: string | null,
  changes: FileChanges,
): Promise<string> {
  const oid = await editLevel(
    db,
    batch,
    rootTree,
    [...changes].map(([p, c]) => [p.split('/'), c] as const),
  )
  return oid ?? batch.add('tree', Buffer.alloc(0))
}

async function editLevel(
  db: ObjectDb,
  batch: ObjectBatch,
  treeOid: string | null,
  changes: ReadonlyArray<readonly [string[], Buffer | null]>,
): Promise<string | null> {
  const entries = new Map<string, TreeEntry>()
  if (treeOid) for (const e of await db.readTree(treeOid)) if (!badEntryName(e.name)) entries.set(e.name, e)
  const byChild = new Map<string, Array<readonly [string[], Buffer | null]>>()
  for (const [parts, content] of changes) {
    const [head, ...rest] = parts
    if (!head) continue
    if (rest.length === 0) {
      if (content === null) entries.delete(head)
      else entries.set(head, { mode: FILE_MODE, name: head, oid: batch.add('blob', content) })
    } else {
      let list = byChild.get(head)
      if (!list) byChild.set(head, (list = []))
      list.push([rest, content])
    }
  }
  for (const [name, sub] of byChild) {
    const existing = entries.get(name)
    const subOid = await editLevel(db, batch, existing?.mode === TREE_MODE ? existing.oid : null, sub)
    if (subOid === null) entries.delete(name)
    else entries.set(name, { mode: TREE_MODE, name, oid: subOid })
  }
  if (entries.size === 0) return null
  const list = [...entries.values()]
  const oid = batch.add('tree', serializeTree(list))
  db.rememberTree(oid, list)
  return oid
}
