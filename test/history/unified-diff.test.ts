// The rule diff (service/unified-diff.ts) against the real `git diff --no-index -U3` on seeded random
// pairs: the patch applies with `git apply` and gives the new text byte for byte, it is never longer
// than git's, and its hunks are git's when git's diff is minimal too (always for unique lines, mostly where lines repeat). Then its bounds: linear
// memory, a 413 over the line and comparison bounds, and the no-newline marks.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { RulekeeperError } from '../../src/errors.js'
import { DIFF_LIMITS, unifiedDiff } from '../../src/service/unified-diff.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'

/** git's diff of two texts, from its first hunk, hunk headers without the function context. */
function gitDiff(dir: string, a: string, b: string): string {
  fs.writeFileSync(path.join(dir, 'old'), a)
  fs.writeFileSync(path.join(dir, 'new'), b)
  const r = spawnSync(
    'git',
    [
      '-c',
      'diff.indentHeuristic=false',
      'diff',
      '--no-index',
      '--no-color',
      '-U3',
      '--diff-algorithm=myers',
      'old',
      'new',
    ],
    { cwd: dir, encoding: 'utf8' },
  )
  return hunks(r.stdout)
}

const hunks = (patch: string) => {
  const at = patch.indexOf('\n@@ ')
  return at < 0 ? '' : patch.slice(at + 1).replace(/^(@@ [^@]* @@).*$/gm, '$1')
}
const changedCount = (h: string) => h.split('\n').filter((l) => /^[-+]/.test(l)).length

/** Applies `patch` to `a` with `git apply` and returns the file it makes. */
function applied(dir: string, a: string, patch: string): string {
  fs.writeFileSync(path.join(dir, 'f'), a)
  fs.writeFileSync(path.join(dir, 'p.diff'), patch)
  execFileSync('git', ['apply', '--whitespace=nowarn', 'p.diff'], { cwd: dir, stdio: 'pipe' })
  return fs.readFileSync(path.join(dir, 'f'), 'utf8')
}

/** A rule-like text of unique lines, then edited at a few places (the usual case). */
function realisticPair(r: SeededRandom): [string, string] {
  const lines = Array.from({ length: 5 + r.int(60) }, (_, i) => `Key${i}: ${r.str(1 + r.int(12))}`)
  const edited = [...lines]
  for (let e = 1 + r.int(5); e > 0; e--) {
    const at = r.int(edited.length + 1)
    const what = r.int(3)
    if (what === 0) edited.splice(at, 0, ...Array.from({ length: 1 + r.int(4) }, () => `New: ${r.str(6)}`))
    else if (what === 1) edited.splice(at, 1 + r.int(3))
    else edited.splice(at, 1, `Changed: ${r.str(5)}`)
  }
  return [joined(r, lines), joined(r, edited)]
}

/** Lines from a small alphabet: repeats everywhere, many minimal alignments. */
function repetitivePair(r: SeededRandom): [string, string] {
  const line = () => r.pick(['a', 'b', 'c', '', '  - x', 'd'])
  const a = Array.from({ length: r.int(40) }, line)
  const b = r.bool(0.3) ? Array.from({ length: r.int(40) }, line) : [...a]
  for (let e = r.int(6); e > 0; e--) {
    const at = r.int(b.length + 1)
    if (r.bool()) b.splice(at, 0, line())
    else b.splice(at, 1)
  }
  return [joined(r, a), joined(r, b)]
}

/** Lines joined, with or (sometimes) without the last newline. */
const joined = (r: SeededRandom, lines: string[]) =>
  lines.length === 0 ? '' : lines.join('\n') + (r.bool(0.85) ? '\n' : '')

t.test('against git diff --no-index -U3 on seeded random pairs', async (t) => {
  const dir = tempDir('rk-diff-')
  const seeds = 300
  let identical = 0
  let minimalBoth = 0
  for (let seed = 1; seed <= seeds; seed++) {
    const r = new SeededRandom(seed)
    const [a, b] = seed % 2 ? realisticPair(r) : repetitivePair(r)
    if (a === b) continue
    const ours = unifiedDiff('f', a, b)
    const git = gitDiff(dir, a, b)
    const label = `seed ${seed}`
    if (applied(dir, a, ours) !== b) t.fail(`${label}: the patch applies and gives the new text`)
    const n = changedCount(hunks(ours))
    if (n > changedCount(git)) t.fail(`${label}: no longer than git's (${n} > ${changedCount(git)})`)
    if (n === changedCount(git)) {
      minimalBoth++
      if (hunks(ours) === git) identical++
      else if (seed % 2) t.equal(hunks(ours), git, `${label}: unique lines, git minimal: the same hunks`)
    }
  }
  t.pass(`${identical} of ${minimalBoth} pairs where git is minimal have git's hunks exactly`)
  // Among lines that repeat, git also aligns a group with the other side's groups (its
  // xdl_change_compact); this module only slides groups down, so some ties differ (15% here).
  t.ok(identical / minimalBoth > 0.8, 'ties between minimal alignments are mostly broken as git breaks them')
})

t.test('the format: headers, created and deleted files, no-newline marks, joined hunks', async (t) => {
  t.equal(unifiedDiff('x.yml', 'a\n', 'a\n'), '')
  t.equal(unifiedDiff('x.yml', null, 'a\nb\n'), '--- /dev/null\n+++ b/x.yml\n@@ -0,0 +1,2 @@\n+a\n+b\n')
  t.equal(unifiedDiff('x.yml', 'a\n', null), '--- a/x.yml\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n')
  t.equal(
    unifiedDiff('x.yml', 'a\nb', 'a\nb\n'),
    '--- a/x.yml\n+++ b/x.yml\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n',
  )
  // Changes 6 kept lines apart share one hunk, 7 apart do not (as git -U3 joins them).
  const base = Array.from({ length: 14 }, (_, i) => `${i + 1}`)
  const edit = (x: number, y: number) => base.map((l, i) => (i === x ? 'X' : i === y ? 'Y' : l)).join('\n')
  t.equal(unifiedDiff('f', `${base.join('\n')}\n`, `${edit(1, 8)}\n`).match(/^@@/gm)?.length, 1)
  t.equal(unifiedDiff('f', `${base.join('\n')}\n`, `${edit(1, 9)}\n`).match(/^@@/gm)?.length, 2)
})

t.test('linear space: 40,000 changed lines in well under a second and a few MB', async (t) => {
  const n = 40_000
  const a = `${Array.from({ length: n }, (_, i) => `#a${i}`).join('\n')}\n`
  const b = `${Array.from({ length: n }, (_, i) => (i % 2 ? `#a${i}` : `#b${i}`)).join('\n')}\n`
  const started = performance.now()
  const d = unifiedDiff('big.yml', a, b)
  t.ok(performance.now() - started < 5000, 'quick (the quadratic diff ran out of memory here)')
  t.equal(changedCount(hunks(d)), n, 'every other line replaced: 20,000 removed and 20,000 added')
})

t.test('over the bounds: a 413 with a clear message, not a stalled server', async (t) => {
  const many = `${'x\n'.repeat(DIFF_LIMITS.maxLines / 2 + 1)}`
  t.throws(() => unifiedDiff('big.yml', many, `${many}y\n`), {
    constructor: RulekeeperError,
    status: 413,
    message: /big\.yml has 100001 \+ 100002 lines.*at most 200000 lines.*git diff/,
  })
  // Repeated lines in scrambled order: Myers would compare ~lines × edit distance.
  const r = new SeededRandom(7)
  const scrambled = () => `${Array.from({ length: 60_000 }, () => r.pick(['a', 'b', 'c', 'd'])).join('\n')}\n`
  const old = DIFF_LIMITS.maxComparisons
  t.teardown(() => {
    DIFF_LIMITS.maxComparisons = old
  })
  DIFF_LIMITS.maxComparisons = 10_000_000
  const started = performance.now()
  t.throws(() => unifiedDiff('scrambled.yml', scrambled(), scrambled()), {
    status: 413,
    message: /differ in too many places to diff here .*10000000 line comparisons.*git diff/,
  })
  t.ok(performance.now() - started < 10_000, 'gives up within its budget')
})
