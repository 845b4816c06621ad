// JSON values as Python literals, and rule text made safe for comments. Strings in rules are
// attacker-controlled: every character outside printable ASCII is written as an escape, so a
// literal can never end early, and comments keep printable ASCII only (no newline can end them).
// Numbers are written as the JavaScript value the TypeScript evaluator compares with.

/** A Python string literal (double-quoted, escapes for anything not printable ASCII). */
export function pyString(s: string): string {
  let out = '"'
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === '"') out += '\\"'
    else if (cp >= 0x20 && cp < 0x7f) out += ch
    else if (cp < 0x100) out += `\\x${cp.toString(16).padStart(2, '0')}`
    else if (cp < 0x10000)
      out += `\\u${cp.toString(16).padStart(4, '0')}` // lone surrogates too
    else out += `\\U${cp.toString(16).padStart(8, '0')}`
  }
  return `${out}"`
}

/** A number as Python source with the same value (ints exact, floats by their shortest digits). */
export function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'float("nan")'
  if (n === Infinity) return 'float("inf")'
  if (n === -Infinity) return 'float("-inf")'
  // Every integral double is an exact Python int; BigInt gives all its digits (1e21 included).
  if (Number.isInteger(n)) return BigInt(n).toString()
  // Non-integral doubles are below 2**53, so String() is '1.5', '1e-7' or '1.5e-10': valid Python.
  return String(n)
}

/** A JSON value (scalars, lists, plain objects) as a Python literal, on one line. */
export function pyLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number') return pyNumber(v)
  if (typeof v === 'string') return pyString(v)
  if (Array.isArray(v)) return `[${v.map(pyLiteral).join(', ')}]`
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
    return `{${entries.map(([k, x]) => `${pyString(k)}: ${pyLiteral(x)}`).join(', ')}}`
  }
  throw new Error(`cannot write ${typeof v} as a Python literal`)
}

/** Rule text for a comment: printable ASCII only, cut to `max` characters. */
export function commentText(s: string, max = 80): string {
  const clean = s.replace(/[^\x20-\x7e]/g, '?')
  return clean.length > max ? `${clean.slice(0, max - 1)}…`.replace('…', '...') : clean
}
