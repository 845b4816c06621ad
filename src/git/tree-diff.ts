// Tree walks: every file of a revision, and the files that differ between two revisions. Equal
// subtrees (same oid) are skipped without being read, so a diff costs what changed, not the size
// of the repository. An entry whose name no checkout can hold (git-tree.ts `badEntryName`) is
// reported as itself, with the reason, and never walked into.
import { badEntryName, TREE_MODE } from './git-tree.js'
import type { ObjectDb } from './object-db.js'
import { TurnBudget } from '../turn-budget.js'

/** A tree entry whose name is not a valid path segment: why, and the folder holding it ('' for the root). */
export interface BadName {
  reason: string
  folder: string
}

export interface FileEntry {
  path: string
  oid: string
  /** Set when the entry's name is not a valid path segment (a file or a folder, not walked). */
  badName?: BadName
}

export interface FileDiff {
  path: string
  oldOid: string | null
  newOid: string | null
  /** Set when the entry's name is not a valid path segment (a file or a folder, not walked). */
  badName?: BadName
}

/** Folders no analysis file is read from (node_modules: a checkout's installed packages, never rules). */
export const skipFolder = (name: string) => name.startsWith('.') || name === '__pycache__' || name === 'node_modules'
/** A gitlink (submodule) entry: not a file of this repository. */
export const SUBMODULE_MODE = '160000'

export async function listFiles(
  db: ObjectDb,
  treeOid: string,
  prefix = '',
  turns = new TurnBudget(),
): Promise<FileEntry[]> {
  const out: FileEntry[] = []
  for (const e of await db.readTree(treeOid)) {
    const p = prefix ? `${prefix}/${e.name}` : e.name
    const bad = badEntryName(e.name)
    if (bad) out.push({ path: p, oid: e.oid, badName: { reason: bad, folder: prefix } })
    else if (e.mode === TREE_MODE) {
      if (!skipFolder(e.name)) out.push(...(await listFiles(db, e.oid, p, turns)))
    } else if (e.mode !== SUBMODULE_MODE) out.push({ path: p, oid: e.oid })
  }
  await turns.pass()
  return out
}

export async function diffTrees(
  db: ObjectDb,
  oldTree: string | null,
  newTree: string | null,
  prefix = '',
  turns = new TurnBudget(),
): Promise<FileDiff[]> {
  if (oldTree === newTree) return []
  const a = new Map((oldTree ? await db.readTree(oldTree) : []).map((e) => [e.name, e]))
  const b = new Map((newTree ? await db.readTree(newTree) : []).map((e) => [e.name, e]))
  const out: FileDiff[] = []
  await turns.pass()
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(name)
    const y = b.get(name)
    if (x && y && x.oid === y.oid && x.mode === y.mode) continue
    const p = prefix ? `${prefix}/${name}` : name
    const bad = badEntryName(name)
    if (bad) {
      // Reported as one entry whatever it holds (its old and new oids, file or folder).
      out.push({ path: p, oldOid: x?.oid ?? null, newOid: y?.oid ?? null, badName: { reason: bad, folder: prefix } })
      continue
    }
    const xTree = x?.mode === TREE_MODE ? x.oid : null
    const yTree = y?.mode === TREE_MODE ? y.oid : null
    if ((xTree || yTree) && !skipFolder(name)) out.push(...(await diffTrees(db, xTree, yTree, p, turns)))
    const xFile = x && x.mode !== TREE_MODE && x.mode !== SUBMODULE_MODE ? x.oid : null
    const yFile = y && y.mode !== TREE_MODE && y.mode !== SUBMODULE_MODE ? y.oid : null
    if (xFile !== yFile) out.push({ path: p, oldOid: xFile, newOid: yFile })
  }
  return out
}
