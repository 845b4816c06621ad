// One problem of the configuration: where it is (a key path such as `destinations[2].url`) and what
// is wrong. Every section's check returns these, so that loadConfig can list them all in one error,
// and an unknown key is always reported the same way: with the nearest known key as a suggestion.
import { RulekeeperError } from '../errors.js'

export type KeyPath = ReadonlyArray<string | number>

export interface ConfigProblem {
  path: KeyPath
  message: string
}

/** `destinations[2].url`, `server.port`, `(top level)` for the empty path. */
export function formatKeyPath(path: KeyPath): string {
  let out = ''
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`
    else out += out === '' ? seg : `.${seg}`
  }
  return out === '' ? '(top level)' : out
}

/** Edit distance (insertions, deletions, substitutions, swaps of neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase()
  const u = b.toLowerCase()
  // d[i][j]: the distance between the first i characters of s and the first j of u.
  const d = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: u.length + 1 }, (_, j) => i + j))
  for (let i = 1; i <= s.length; i++)
    for (let j = 1; j <= u.length; j++) {
      const row = d[i]!
      const cost = s[i - 1] === u[j - 1] ? 0 : 1
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === u[j - 2] && s[i - 2] === u[j - 1])
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[s.length]![u.length]!
}

/** The known key nearest to `word` (a third of the longer name may differ), or undefined. */
export function nearestKey(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const k of known) {
    const d = editDistance(word, k)
    const allowed = Math.max(1, Math.floor(Math.max(word.length, k.length) / 3))
    if (d <= allowed && d < bestDistance) [best, bestDistance] = [k, d]
  }
  return best
}

/** `unknown key; did you mean destinations?`, or the known keys when none is near. */
export function unknownKey(path: KeyPath, key: string, known: readonly string[]): ConfigProblem {
  const near = nearestKey(key, known)
  const hint = near ? `did you mean ${near}?` : `known keys: ${known.join(', ')}`
  return { path: [...path, key], message: `unknown key; ${hint}` }
}

/** A problem for every key of `map` that is not in `known`. */
export function unknownKeys(path: KeyPath, map: Record<string, unknown>, known: readonly string[]): ConfigProblem[] {
  return Object.keys(map)
    .filter((k) => !known.includes(k))
    .map((k) => unknownKey(path, k, known))
}

/** `destinations[2].url: must be …`, one line a problem. */
export function problemLine(p: ConfigProblem): string {
  return `${formatKeyPath(p.path)}: ${p.message}`
}

/** The one error of a configuration that does not load: what, how many, where, then every problem. */
export function configInvalid(
  subject: string,
  problems: readonly ConfigProblem[],
  opts: { lines?: readonly string[]; source?: string } = {},
): RulekeeperError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`
  const lines = opts.lines ?? problems.map(problemLine)
  return new RulekeeperError(
    'ConfigInvalid',
    `${subject}: ${count}${opts.source ? ` (${opts.source})` : ''}:\n  ${lines.join('\n  ')}`,
  )
}
