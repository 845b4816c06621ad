// Files of one revision that collide ignoring case: two ids that differ only by case (ids are unique
// ignoring case), and two paths that differ only by case (a clone on a case-insensitive disk keeps
// one of them). The index reports each on every file involved; none is silently preferred.
import { foldId } from './rule-id.js'

export interface CaseCollision {
  /** The YAML file the problem is reported on. */
  path: string
  /** Whether the problem is about the file's RuleID (else about a path). */
  onId: boolean
  message: string
}

interface FileLike {
  path: string
  rule?: { pythonPath?: string }
}

export function* caseCollisions(
  files: Iterable<FileLike>,
  folded: ReadonlyMap<string, readonly string[]>,
  holdersOf: (id: string) => readonly string[],
): Generator<CaseCollision> {
  for (const ids of folded.values()) {
    if (ids.length < 2) continue
    for (const id of ids) {
      const others = ids.filter((o) => o !== id).map((o) => `${o} (${holdersOf(o).join(', ')})`)
      const message = `id ${id} differs only by case from ${others.join(', ')}: ids must be unique ignoring case`
      for (const p of holdersOf(id)) yield { path: p, onId: true, message }
    }
  }
  // fold(path) → [path, the YAML file it belongs to]
  const byFold = new Map<string, Array<[string, string]>>()
  const add = (p: string, owner: string) => {
    const k = foldId(p)
    const list = byFold.get(k)
    if (list) list.push([p, owner])
    else byFold.set(k, [[p, owner]])
  }
  for (const f of files) {
    add(f.path, f.path)
    if (f.rule?.pythonPath) add(f.rule.pythonPath, f.path)
  }
  for (const list of byFold.values()) {
    const distinct = [...new Set(list.map(([p]) => p))]
    if (distinct.length < 2) continue
    for (const [p, owner] of list) {
      const others = distinct.filter((o) => o !== p).join(', ')
      yield {
        path: owner,
        onId: false,
        message: `path ${p} differs only by case from ${others}: a clone on a case-insensitive disk (Windows, macOS) keeps only one of them`,
      }
    }
  }
}
