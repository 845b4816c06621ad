// The `KeyPath` syntax: `a.b[0].c`, `a[*].b` — dot-separated field names, `[n]` array indexes and
// `[*]` wildcards. Parsing happens once at validation; evaluation only ever sees the segments.
// Field names are taken literally up to the next `.`, `[` or `]` (spaces included).
import type { PathSegment } from './ast.js'

export type KeyPathParse = { ok: true; segments: PathSegment[] } | { ok: false; message: string }

/** Largest array index a path may name (beyond it no JSON array of an event can reach). */
const MAX_INDEX = 2 ** 31 - 1

// A native regex scan: this runs over 10 MB inputs from hostile files.
const SPECIAL = /[.[\]]/g

/** Index of the first '.', '[' or ']' at or after `i`. */
function nameEnd(text: string, i: number): number {
  SPECIAL.lastIndex = i
  const m = SPECIAL.exec(text)
  return m === null ? text.length : m.index
}

export function parseKeyPath(text: string, maxSegments: number): KeyPathParse {
  if (text.length === 0) return { ok: false, message: 'is empty' }
  const segments: PathSegment[] = []
  const fail = (message: string, at: number): KeyPathParse => ({
    ok: false,
    message: `${message} at character ${at + 1}`,
  })
  let i = 0
  for (;;) {
    // One dot-separated segment: an optional name, then any number of [n] / [*].
    const start = i
    i = nameEnd(text, i)
    const hasName = i > start
    if (hasName) segments.push({ kind: 'field', name: text.slice(start, i) })
    let brackets = 0
    while (i < text.length && text[i] === '[') {
      const close = text.indexOf(']', i)
      if (close < 0) return fail("has an unclosed '['", i)
      const inner = text.slice(i + 1, close)
      if (inner === '*') segments.push({ kind: 'wildcard' })
      else if (/^[0-9]+$/.test(inner)) {
        const index = Number(inner)
        if (index > MAX_INDEX) return fail(`has an array index too large (${inner.slice(0, 20)})`, i + 1)
        segments.push({ kind: 'index', index })
      } else return fail("has '[…]' that is neither an index [n] nor a wildcard [*]", i)
      i = close + 1
      brackets++
    }
    if (!hasName && brackets === 0) return fail('has an empty segment', i)
    if (segments.length > maxSegments) return fail(`has more than ${maxSegments} segments`, i)
    if (i === text.length) return { ok: true, segments }
    if (text[i] === ']') return fail("has a ']' without '['", i)
    if (text[i] !== '.') return fail(`has '${text[i]}' where '.' or '[' was expected`, i)
    i++ // the dot
    if (i === text.length) return fail('ends with a dot', i - 1)
  }
}

/** Renders segments back to KeyPath text (used in messages and by the transpiler). */
export function formatKeyPath(segments: readonly PathSegment[]): string {
  let out = ''
  for (const s of segments) {
    if (s.kind === 'field') out += out === '' ? s.name : `.${s.name}`
    else out += s.kind === 'index' ? `[${s.index}]` : '[*]'
  }
  return out
}
