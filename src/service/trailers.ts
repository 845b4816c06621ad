// Commit-message trailers (`Key: value` lines of the last paragraph), read and written the way git
// does: lines end at `\n` only. U+2028/U+2029, a lone CR or U+0085 inside a line never start a new
// line here (JavaScript's `^`/`$` with the `m` flag would), and a value written must be one line.

/** Characters that some reader could take as the end of a line, or that git strips. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const LINE_BREAKING = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/u

/**
 * The trailers of a message: the lines of its last paragraph (after the last blank line, with at
 * least one paragraph before it), each `Key: value` line as key → values in order.
 */
export function parseTrailers(message: string): Map<string, string[]> {
  const lines = message.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  const blank = (l: string) => /^[ \t]*$/.test(l)
  let end = lines.length
  while (end > 0 && blank(lines[end - 1]!)) end--
  let start = end
  while (start > 0 && !blank(lines[start - 1]!)) start--
  const out = new Map<string, string[]>()
  if (start === 0) return out // the only paragraph is the subject: no trailers
  for (const line of lines.slice(start, end)) {
    const m = /^([A-Za-z0-9-]+): ?(.*)$/su.exec(line)
    if (!m) continue
    const value = m[2]!.replace(/^[ \t]+|[ \t]+$/g, '')
    // A value holding a line break of another convention is not one git would show as such.
    if (LINE_BREAKING.test(value)) continue
    const list = out.get(m[1]!) ?? []
    list.push(value)
    out.set(m[1]!, list)
  }
  return out
}

/** The one value of a trailer, or undefined when it is absent or given more than once. */
export function singleTrailer(trailers: Map<string, string[]>, key: string): string | undefined {
  const v = trailers.get(key)
  return v && v.length === 1 && v[0] !== '' ? v[0] : undefined
}

/** Trailer lines for a message; throws (an internal error) if a value is not exactly one line. */
export function formatTrailers(entries: ReadonlyArray<readonly [string, string]>): string {
  return entries
    .map(([k, v]) => {
      if (LINE_BREAKING.test(v) || v !== v.trim())
        throw new Error(`trailer ${k} would not be one line: ${JSON.stringify(v)}`)
      return `${k}: ${v}`
    })
    .join('\n')
}
