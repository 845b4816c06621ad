// How deeply a parsed JSON value nests: the one check for values from outside (a delivery's records,
// what rule code reports through a result pipe it can write itself). V8's JSON.parse is iterative
// and reads any depth, but JSON.stringify and every recursive walk overflow their stack some
// thousands of levels down. The check recurses, but stops one level past `max`, so its own depth is
// bounded whatever the value's; it allocates nothing (it runs on every ingested record).

/** How deeply reported values may nest (Python's json cannot write deeper under its recursion limit). */
export const MAX_JSON_DEPTH = 1000

/** Whether `value` nests at most `max` arrays/objects deep (a scalar: 0, `{}`: 1). */
export function nestedWithin(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return true
  return max >= 1 && !deeper(value, max - 1)
}

/** Whether `node` holds an object or array more than `left` levels below it. */
function deeper(node: object, left: number): boolean {
  if (Array.isArray(node)) {
    for (const child of node)
      if (typeof child === 'object' && child !== null && (left <= 0 || deeper(child, left - 1))) return true
    return false
  }
  for (const k in node) {
    if (!Object.hasOwn(node, k)) continue
    const child = (node as Record<string, unknown>)[k]
    if (typeof child === 'object' && child !== null && (left <= 0 || deeper(child, left - 1))) return true
  }
  return false
}
