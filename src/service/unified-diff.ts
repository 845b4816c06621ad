// A unified diff of two texts in git's `diff -U3` format (`---`/`+++` headers, `@@` hunks with three
// lines of context, "\ No newline at end of file" marks), in space linear in the lines: the line
// alignment is jest's linear-space Myers (diff-sequences); this module only prepares the lines and
// lays out git's format. Bounded: over DIFF_LIMITS it throws a 413 (RulekeeperError) instead.
import diffSequencesModule from 'diff-sequences'
import { RulekeeperError } from '../errors.js'

// The package is CommonJS with `exports.default`: Node's ESM loader (and TypeScript's view of it)
// gives the exports object as the default import.
const diffSequences = diffSequencesModule.default

export const DIFF_LIMITS = {
  /** Lines of both sides together (a 256 KiB rule file of short lines has ~40,000). */
  maxLines: 200_000,
  /**
   * Line comparisons the alignment may make: Myers costs about (lines) × (edit distance), so this
   * bounds the edit distance of large inputs (~1 s of one core at most).
   */
  maxComparisons: 100_000_000,
}

/** A last line without its newline carries this mark, so "x" and "x\n" differ as lines too. */
const NO_EOL = '\u0000'

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  else lines[lines.length - 1] += NO_EOL
  return lines
}

const tooLarge = (message: string) => new RulekeeperError('PayloadTooLarge', message)

/**
 * Which lines of `a` and `b` are changed (1) in a minimal edit script. Lines found on one side only
 * are changed whatever the alignment, so they are set aside before Myers runs (as git does): the
 * usual edit of unique lines costs linear time. Each group of changed lines is then slid down as
 * far as equal lines allow (git's default placement, without its indent heuristic).
 */
function changedLines(a: string[], b: string[]): { ca: Uint8Array; cb: Uint8Array } {
  const ids = new Map<string, number>()
  const idOf = (l: string) => {
    let id = ids.get(l)
    if (id === undefined) ids.set(l, (id = ids.size))
    return id
  }
  const ia = Int32Array.from(a, idOf)
  const ib = Int32Array.from(b, idOf)
  const inA = new Uint8Array(ids.size)
  const inB = new Uint8Array(ids.size)
  for (const x of ia) inA[x] = 1
  for (const x of ib) inB[x] = 1
  const ca = new Uint8Array(a.length).fill(1)
  const cb = new Uint8Array(b.length).fill(1)
  // The lines that may be common, by their index on each side.
  const ka = Int32Array.from(ia.keys()).filter((i) => inB[ia[i]!] === 1)
  const kb = Int32Array.from(ib.keys()).filter((i) => inA[ib[i]!] === 1)
  let comparisons = 0
  diffSequences(
    ka.length,
    kb.length,
    (i, j) => {
      if (++comparisons > DIFF_LIMITS.maxComparisons)
        throw tooLarge(
          'the two versions differ in too many places to diff here (the alignment would take more than ' +
            `${DIFF_LIMITS.maxComparisons} line comparisons); compare the revisions with git diff`,
        )
      return ia[ka[i]!] === ib[kb[j]!]
    },
    (n, i, j) => {
      for (let k = 0; k < n; k++) {
        ca[ka[i + k]!] = 0
        cb[kb[j + k]!] = 0
      }
    },
  )
  slideDown(ia, ca)
  slideDown(ib, cb)
  return { ca, cb }
}

/**
 * Moves each group of changed lines down while the line after it equals its first line: the same
 * lines are kept, only which copy counts as changed moves (groups that meet are merged).
 */
function slideDown(ids: Int32Array, changed: Uint8Array): void {
  let i = 0
  while (i < changed.length) {
    if (!changed[i]) {
      i++
      continue
    }
    let start = i
    let end = i
    while (end < changed.length && changed[end]) end++
    while (end < changed.length && ids[start] === ids[end]) {
      changed[start++] = 0
      changed[end++] = 1
      while (end < changed.length && changed[end]) end++
    }
    i = end
  }
}

type Op = { kind: ' ' | '-' | '+'; line: string }

const range = (start: number, count: number) =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`

/**
 * The unified diff of `before` → `after` for `path` (null: the file did not exist on that side), or
 * '' when they are equal. A last line without its newline is marked as git marks it. Throws a 413
 * RulekeeperError over DIFF_LIMITS.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null, context = 3): string {
  if (before === after) return ''
  const a = splitLines(before ?? '')
  const b = splitLines(after ?? '')
  if (a.length + b.length > DIFF_LIMITS.maxLines)
    throw tooLarge(
      `${path} has ${a.length} + ${b.length} lines in the two versions; diffs are made of at most ` +
        `${DIFF_LIMITS.maxLines} lines together; compare the revisions with git diff`,
    )
  const { ca, cb } = changedLines(a, b)
  // The edit script: kept lines, and each changed block as its removed then its added lines.
  const ops: Op[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && !ca[i] && !cb[j]) {
      ops.push({ kind: ' ', line: a[i++]! })
      j++
      continue
    }
    while (i < a.length && ca[i]) ops.push({ kind: '-', line: a[i++]! })
    while (j < b.length && cb[j]) ops.push({ kind: '+', line: b[j++]! })
  }
  const header = `--- ${before === null ? '/dev/null' : `a/${path}`}\n+++ ${after === null ? '/dev/null' : `b/${path}`}\n`
  const changed: number[] = []
  for (let k = 0; k < ops.length; k++) if (ops[k]!.kind !== ' ') changed.push(k)
  const out: string[] = [header]
  let aLine = 1
  let bLine = 1
  let walked = 0
  let c = 0
  while (c < changed.length) {
    const first = changed[c]!
    let last = first
    // Changes at most 2 × context kept lines apart share a hunk (as git joins them).
    while (c + 1 < changed.length && changed[c + 1]! - last - 1 <= 2 * context) last = changed[++c]!
    c++
    const start = Math.max(0, first - context)
    const end = Math.min(ops.length, last + context + 1)
    for (; walked < start; walked++) {
      if (ops[walked]!.kind !== '+') aLine++
      if (ops[walked]!.kind !== '-') bLine++
    }
    let aCount = 0
    let bCount = 0
    for (let k = start; k < end; k++) {
      if (ops[k]!.kind !== '+') aCount++
      if (ops[k]!.kind !== '-') bCount++
    }
    out.push(`@@ -${range(aLine, aCount)} +${range(bLine, bCount)} @@\n`)
    for (let k = start; k < end; k++) {
      const o = ops[k]!
      out.push(
        o.line.endsWith(NO_EOL)
          ? `${o.kind}${o.line.slice(0, -1)}\n\\ No newline at end of file\n`
          : `${o.kind}${o.line}\n`,
      )
    }
  }
  return out.join('')
}
