// The cost of a parsed YAML document's aliases, measured before its value is built: the size the
// value has with every alias expanded (a 245 KB anchor aliased 99 times is 24 MB of rule, whatever
// the alias count), aliases that refer to their own anchor, and the number of aliases and anchors
// (`yaml` resolves each alias by a scan over all of them). One walk, each node sized once.
import { isAlias, isCollection, isPair, isScalar, type Document } from 'yaml'

/** At most this many aliases in one text, and this many anchors when there are aliases. */
const MAX_ALIASES = 1000
const MAX_ANCHORS = 10_000

/** The expanded size a text of `bytes` may reach: 4× its size, at least 64 KiB, at most 4 MiB. */
export function expansionBudget(bytes: number): number {
  return Math.min(4 * 1024 * 1024, Math.max(64 * 1024, 4 * bytes))
}

/**
 * Why the aliases of `doc` are refused and where (the offset of the node being measured), or
 * undefined when they are fine. Nesting must be bounded already.
 */
export function aliasProblem(doc: Document, budget: number): { message: string; offset: number } | undefined {
  const anchors = new Map<string, unknown>()
  const sizes = new Map<unknown, number>()
  const open = new Set<unknown>()
  let aliases = 0
  let anchorCount = 0
  let problem: string | undefined
  let offset = 0
  const fail = (node: unknown, message: string) => {
    problem = message
    const range = (node as { range?: [number, number, number] }).range
    offset = range ? range[0] : 0
  }
  const sizeOf = (node: unknown): number => {
    if (problem) return 0
    if (isAlias(node)) {
      if (++aliases > MAX_ALIASES) fail(node, `YAML has more than ${MAX_ALIASES} aliases`)
      const target = anchors.get(node.source)
      if (target === undefined) return 1
      if (open.has(target)) {
        fail(node, `YAML alias *${node.source} refers to its own anchor`)
        return 0
      }
      return sizes.get(target) ?? 1
    }
    const anchor = isScalar(node) || isCollection(node) ? node.anchor : undefined
    if (anchor) {
      anchorCount++
      anchors.set(anchor, node)
    }
    let size = 1
    if (isScalar(node)) size += String(node.value ?? '').length
    else if (isPair(node)) size = sizeOf(node.key) + sizeOf(node.value)
    else if (isCollection(node)) {
      open.add(node)
      for (const item of node.items) size += sizeOf(item)
      open.delete(node)
    }
    if (size > budget && !problem) fail(node, `YAML aliases expand the text to more than ${budget} bytes`)
    sizes.set(node, size)
    return size
  }
  sizeOf(doc.contents)
  if (!problem && aliases > 0 && anchorCount > MAX_ANCHORS)
    fail(doc.contents, `YAML with aliases has more than ${MAX_ANCHORS} anchors`)
  return problem === undefined ? undefined : { message: problem, offset }
}
