// A rule's entity tag and the write preconditions judged against it. The tag is the blob ids of the
// rule's files (its YAML, then its `.py` companion) in the tree at hand, so it changes exactly when
// those files change. The writer checks If-Match / If-None-Match against the tree it commits on.
import { badRequest, preconditionFailed, type RulekeeperError } from '../errors.js'
import type { GitRepository } from '../git/repository.js'

/** `If-Match` (a list of strong tags, or `*`: "exists") and `If-None-Match: *` ("does not exist"). */
export interface Precondition {
  ifMatch?: '*' | string[]
  ifNoneMatch?: '*'
}

export async function ruleEtag(
  repo: Pick<GitRepository, 'blobAt'>,
  tree: string | null,
  rule: { path: string; pythonPath?: string },
): Promise<string> {
  const [yaml, py] = await Promise.all([
    repo.blobAt(tree, rule.path),
    rule.pythonPath ? repo.blobAt(tree, rule.pythonPath) : null,
  ])
  return `"${[yaml ?? 'none', ...(py ? [py] : [])].join('-')}"`
}

/**
 * An If-Match / If-None-Match header: `*`, or a comma-separated list of entity tags (weak tags are
 * kept with their `W/`: a strong comparison never matches them). undefined when absent.
 */
export function parseEtagHeader(name: string, value: string | undefined): '*' | string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined
  if (value.trim() === '*') return '*'
  const tags = value.match(/(?:W\/)?"[^"]*"|[^,\s]+/g) ?? []
  const bad = tags.find((t) => !/^(?:W\/)?"[^"]*"$/.test(t))
  if (bad !== undefined) throw badRequest(`${name} must be * or a list of quoted entity tags; got ${bad}`)
  return tags
}

/** The write's precondition against the rule's current tag (undefined: no such rule), or null when it holds. */
export function preconditionProblem(
  p: Precondition | undefined,
  current: string | undefined,
  what: string,
): RulekeeperError | null {
  if (!p) return null
  if (p.ifNoneMatch === '*' && current !== undefined)
    return preconditionFailed(
      `If-None-Match: * failed: ${what} already exists (its ETag is ${current}); nothing was written`,
    )
  if (p.ifMatch === '*' && current === undefined)
    return preconditionFailed(`If-Match: * failed: ${what} does not exist; nothing was written`)
  if (Array.isArray(p.ifMatch) && (current === undefined || !p.ifMatch.includes(current)))
    return preconditionFailed(
      current === undefined
        ? `If-Match failed: ${what} does not exist any more; nothing was written`
        : `If-Match failed: ${what} was changed meanwhile (its ETag is now ${current}, you sent ${p.ifMatch.join(', ')}); nothing was written — read it again and reapply your change`,
    )
  return null
}
