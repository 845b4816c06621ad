// A chunk's records of a batch rule as their stored lines, sent to the rule's process as stored (no
// parse and serialization on the server): Panther's engine decodes the event's JSON itself, so the
// text as stored is what its rule reads (a number written `1.0` stays a float). A line goes as it is
// when a scan shows it is one JSON object the rule's decoder reads as JSON.parse does: it starts
// with `{` and ends with its matching `}`, holds no raw control character, and no `NaN`/`Infinity`
// outside strings (Python's json reads those; JSON.parse does not). Then, in a JSON array of such
// lines, each line is exactly one element, and a damaged line can only make the array unreadable as
// a whole, never shift its neighbours (the worker then decodes the block line by line and skips what
// does not read as an object: a damaged line is evaluated by no rule, as before). Any other line is
// parsed here: damaged, it is not given to any rule; else its record goes serialized again.
import type { StoredLines } from '../engine/live.js'

/** A chunk's record as evaluate-records.ts has it. */
interface LineRecord {
  readonly line?: string
  readonly record: Record<string, unknown>
  readonly readable: boolean
}

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const N = 78
const I = 73

/** Whether a line can go as it is (see the header): one balanced object, no control characters, no NaN/Infinity. */
export function plainObjectLine(line: string): boolean {
  const n = line.length
  if (n < 2 || line.charCodeAt(0) !== OPEN_BRACE || line.charCodeAt(n - 1) !== CLOSE_BRACE) return false
  let depth = 0
  for (let i = 0; i < n; i++) {
    const c = line.charCodeAt(i)
    if (c === QUOTE) {
      for (i++; ; i++) {
        if (i >= n) return false
        const d = line.charCodeAt(i)
        if (d === BACKSLASH) i++
        else if (d === QUOTE) break
        else if (d < 32) return false
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0 && i !== n - 1) return false
      if (depth < 0) return false
    } else if (c < 32 || c === N || c === I) return false
  }
  return depth === 0
}

/** Records `at` of a chunk as stored lines (each made once, shared by the rules of those log types). */
export class ChunkLines implements StoredLines {
  readonly lines: string[]

  constructor(
    private readonly records: readonly LineRecord[],
    private readonly at: readonly number[],
    /** Per chunk position: 1 when its line passed `plainObjectLine`. */
    plain: Uint8Array,
  ) {
    this.lines = at.map((i) => (plain[i] === 1 ? records[i]!.line! : JSON.stringify(records[i]!.record)))
  }

  get length(): number {
    return this.at.length
  }

  record(k: number): Record<string, unknown> {
    return this.records[this.at[k]!]!.record
  }

  readable(k: number): boolean {
    return this.records[this.at[k]!]!.readable
  }
}
