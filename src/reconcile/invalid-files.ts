// The invalid files of the served revision as /status and its paged list show them: the revision's
// list is sorted by path once (the reconciler keeps it per revision); a call slices it by binary
// search and bounds only the entries it returns (errors per file, characters per message and id), so
// an answer costs its page, never the whole list (issue 27: 50,000 invalid files).
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

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** The first index of `list` (sorted by path, byte order) whose path comes after `after`. */
function firstAfter(list: readonly InvalidFileEntry[], after: string): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (byteOrder(list[mid]!.path, after) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Up to `limit` entries of `list` (sorted by path, byte order) whose path comes after `after` (null:
 * from the first), bounded; `more` when entries follow the last one returned.
 */
export function invalidFilesAfter(
  list: readonly InvalidFileEntry[],
  after: string | null,
  limit: number,
): { results: InvalidFileEntry[]; more: boolean } {
  const start = after === null ? 0 : firstAfter(list, after)
  const end = Math.min(list.length, start + limit)
  return { results: list.slice(start, end).map(boundedEntry), more: end < list.length }
}
