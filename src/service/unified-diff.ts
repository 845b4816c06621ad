// A unified diff of two texts (git's `diff -U3` format: `---`/`+++` headers, `@@` hunks with three
// lines of context), computed with Myers' O(ND) algorithm over lines. Rule files are small and the
// service must work without the git binary, so the diff of `GET /K/{id}/diff` is made here.

type Op = { kind: ' ' | '-' | '+'; line: string }

/** A last line without its newline carries this mark, so "x" and "x\n" differ as lines too. */
const NO_EOL = '\u0000'

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  else lines[lines.length - 1] += NO_EOL
  return lines
}

/** The shortest edit script from `a` to `b` (Myers), as a list of kept, removed and added lines. */
function editScript(a: string[], b: string[]): Op[] {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  let found = false
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice())
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) {
        found = true
        break
      }
    }
  }
  // Walk the trace back from the end.
  const ops: Op[] = []
  let x = n
  let y = m
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!
    const k = x - y
    const prevK = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1
    const prevX = d === 0 ? 0 : vd[offset + prevK]!
    const prevY = prevX - prevK
    while (x > prevX && y > prevY) ops.push({ kind: ' ', line: a[--x]! }) && y--
    if (d === 0) break
    if (x === prevX) ops.push({ kind: '+', line: b[--y]! })
    else ops.push({ kind: '-', line: a[--x]! })
  }
  while (x > 0 && y > 0) ops.push({ kind: ' ', line: a[--x]! }) && y--
  return ops.reverse()
}

const range = (start: number, count: number) =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`

/**
 * The unified diff of `before` → `after` for `path` (null: the file did not exist on that side), or
 * '' when they are equal. A last line without its newline is marked as git marks it.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null, context = 3): string {
  if (before === after) return ''
  const a = splitLines(before ?? '')
  const b = splitLines(after ?? '')
  const ops = editScript(a, b)
  const header = `--- ${before === null ? '/dev/null' : `a/${path}`}\n+++ ${after === null ? '/dev/null' : `b/${path}`}\n`
  const changed = ops.map((o, i) => (o.kind === ' ' ? -1 : i)).filter((i) => i >= 0)
  const out: string[] = [header]
  let i = 0
  while (i < changed.length) {
    const first = changed[i]!
    let last = first
    while (i + 1 < changed.length && changed[i + 1]! - last <= 2 * context) last = changed[++i]!
    i++
    const start = Math.max(0, first - context)
    const end = Math.min(ops.length, last + context + 1)
    let aLine = 1
    let bLine = 1
    for (let j = 0; j < start; j++) {
      if (ops[j]!.kind !== '+') aLine++
      if (ops[j]!.kind !== '-') bLine++
    }
    const hunk = ops.slice(start, end)
    const aCount = hunk.filter((o) => o.kind !== '+').length
    const bCount = hunk.filter((o) => o.kind !== '-').length
    out.push(`@@ -${range(aLine, aCount)} +${range(bLine, bCount)} @@\n`)
    for (const o of hunk)
      out.push(
        o.line.endsWith(NO_EOL)
          ? `${o.kind}${o.line.slice(0, -1)}\n\\ No newline at end of file\n`
          : `${o.kind}${o.line}\n`,
      )
  }
  return out.join('')
}
