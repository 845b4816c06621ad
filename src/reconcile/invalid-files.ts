// The invalid files of the served revision as /status and its paged list show them: the revision's
// list is sorted by path once (the reconciler keeps it per revision); a call slices it by binary
// search and bounds only the entries it returns (errors per file, characters per message and id), so
// an answer costs its page, never the whole list (issue 27: 50,000 invalid files).
import { createHash } from 'node:crypto'
import type { AccountedProblem } from '../rules/file-accounting.js'

/** One invalid file: `errors` as /status lists them (repository.md). */
export interface InvalidFileEntry {
  path: string
  ruleId: string | null
  errors: AccountedProblem[]
}

/** How many invalid files /status itself lists; the rest are read from GET /status/invalid-files. */
export const STATUS_INVALID_FILES = 100
/** Errors listed per file; past it the last entry says how many more there are. */
export const MAX_ERRORS_PER_FILE = 20
/** Longest error message (and rule id) listed, in characters; longer ones are cut with a marker. */
export const MAX_MESSAGE_CHARS = 500

const CUT = '... (truncated)'

function cap(text: string, max = MAX_MESSAGE_CHARS): string {
  if (text.length <= max) return text
  let head = text.slice(0, max - CUT.length)
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1) // never half a surrogate pair
  return head + CUT
}

function capProblem(p: AccountedProblem): AccountedProblem {
  return p.message.length <= MAX_MESSAGE_CHARS ? p : { ...p, message: cap(p.message) }
}

/** The entry as listed: at most MAX_ERRORS_PER_FILE errors (the last one counting the rest), each message capped. */
export function boundedEntry(e: InvalidFileEntry): InvalidFileEntry {
  const errors = e.errors.length <= MAX_ERRORS_PER_FILE ? e.errors : e.errors.slice(0, MAX_ERRORS_PER_FILE - 1)
  const shown = errors.map(capProblem)
  const more = e.errors.length - errors.length
  if (more > 0)
    shown.push({
      message: `${more} more errors not listed (limit ${MAX_ERRORS_PER_FILE}); \`rulekeeper validate\` on a checkout lists them all`,
      line: null,
      column: null,
    })
  return { path: e.path, ruleId: e.ruleId === null ? null : cap(e.ruleId), errors: shown }
}

/**
 * Where a page ends: the last path returned, or for a path too long to travel in a cursor (over
 * LONG_PATH_BYTES of UTF-8), its first PREFIX_CHARS characters and a digest of the whole path.
 */
export type InvalidFilesPosition = { path: string } | { prefix: string; digest: string }

const LONG_PATH_BYTES = 1024
const PREFIX_CHARS = 256

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
const digestOf = (path: string) => createHash('sha256').update(path).digest('base64url').slice(0, 22)
/** Digests of the long paths of a revision's entries, made once each (a walk looks them up per page). */
const digests = new WeakMap<InvalidFileEntry, string>()
function entryDigest(e: InvalidFileEntry): string {
  let d = digests.get(e)
  if (d === undefined) digests.set(e, (d = digestOf(e.path)))
  return d
}

/** The position after `path`: the path itself, or its prefix and digest when it is long. */
export function positionAfter(path: string): InvalidFilesPosition {
  if (Buffer.byteLength(path) <= LONG_PATH_BYTES) return { path }
  let prefix = path.slice(0, PREFIX_CHARS)
  if (/[\uD800-\uDBFF]$/.test(prefix)) prefix = prefix.slice(0, -1)
  return { prefix, digest: digestOf(path) }
}

/** The first index of `list` (sorted by path, byte order) whose path is after `bound` (or at it, `inclusive`). */
function bisect(list: readonly InvalidFileEntry[], bound: string, inclusive: boolean): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const c = byteOrder(list[mid]!.path, bound)
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The index after `at`. A long path is looked for among the paths sharing its prefix; when it is no
 * longer listed (fixed during the walk), the page starts at the first of them: a path may be listed
 * again, none is skipped.
 */
function indexAfter(list: readonly InvalidFileEntry[], at: InvalidFilesPosition): number {
  if ('path' in at) return bisect(list, at.path, false)
  const first = bisect(list, at.prefix, true)
  for (let i = first; i < list.length && list[i]!.path.startsWith(at.prefix); i++)
    if (list[i]!.path.length > PREFIX_CHARS && entryDigest(list[i]!) === at.digest) return i + 1
  return first
}

/**
 * Up to `limit` entries of `list` (sorted by path, byte order) after `after` (null: from the first),
 * bounded; `next`, the position after the last one returned, when entries follow it.
 */
export function invalidFilesAfter(
  list: readonly InvalidFileEntry[],
  after: InvalidFilesPosition | null,
  limit: number,
): { results: InvalidFileEntry[]; next: InvalidFilesPosition | null } {
  const start = after === null ? 0 : indexAfter(list, after)
  const end = Math.min(list.length, start + limit)
  const results = list.slice(start, end).map(boundedEntry)
  return { results, next: end < list.length && end > start ? positionAfter(list[end - 1]!.path) : null }
}
