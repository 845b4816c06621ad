// rulekeeper reads YAML as panther_analysis_tool's toolchain does (spec detections.md §5.2): texts
// generated from a seed (quoted and plain multi-line scalars at every indentation, block scalars
// with chomping and indentation indicators, anchors, aliases, merge keys, tags, YAML 1.1 words),
// read by PyYAML (Debian's python3-yaml, one process for the whole batch) and by readYaml, the
// reader of the loader and of `validate`. Same value where PyYAML reads the text, a located
// refusal where it refuses; the documented decisions (docs/decisions.md) are applied to PyYAML.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { parseAnalysisFile } from '../../src/rules/rule-file.js'
import { type ReadYaml, readYaml } from '../../src/rules/yaml-text.js'

const PYTHON = '/usr/bin/python3'
const REFERENCE = path.join(import.meta.dirname, 'pyyaml-reference.py')

interface Verdict {
  value?: unknown
  error?: string
  /** What PyYAML found wrong (its message's second part). */
  problem?: string
  line?: number
  column?: number
  pythonOnly?: string
}
interface Reference {
  /** yaml.safe_load as it is. */
  safe: Verdict
  /** The same loader with the YAML 1.2 core schema's resolution (the project's decisions). */
  core: Verdict
  /** `core` on libyaml's scanner, which PAT's ruamel.yaml safe loader uses. */
  libyaml: Verdict
}

const hasPyYaml = spawnSync(PYTHON, ['-c', 'import yaml'], { stdio: 'ignore' }).status === 0

/** PyYAML's verdicts on many texts, from one Python process. */
function pyyaml(texts: string[]): Reference[] {
  const run = spawnSync(PYTHON, [REFERENCE], {
    input: `${texts.map((x) => JSON.stringify(x)).join('\n')}\n`,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (run.status !== 0) throw new Error(`the PyYAML reference failed: ${run.stderr}`)
  return run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Reference)
}

/** JSON with sorted keys, NaN and infinities spelled as the reference spells them. */
function canonical(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (typeof x === 'number' && !Number.isFinite(x))
      return { $float: Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf' }
    if (Array.isArray(x)) return x.map(norm)
    if (x && typeof x === 'object')
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, norm((x as Record<string, unknown>)[k])]),
      )
    return x
  }
  return JSON.stringify(norm(v))
}

type Outcome = 'same' | 'same-as-libyaml' | 'refused-both' | 'disagree'

/** Read to a value JSON holds (bytes, sets and the like are refused here: docs/decisions.md). */
const reads = (v: Verdict) => v.error === undefined && v.pythonOnly === undefined

function compare(text: string, ref: Reference, ours: ReadYaml): { outcome: Outcome; why?: string } {
  // PyYAML's Python scanner refuses a tab inside a plain scalar (`a: x<TAB>y`) that libyaml, PAT's
  // scanner, reads: rulekeeper reads such a text as libyaml does (docs/decisions.md).
  const viaLibyaml = /'\\t'/.test(ref.safe.problem ?? '') && reads(ref.libyaml)
  const expected = viaLibyaml ? ref.libyaml : ref.core
  const refuses = !reads(expected) || (!viaLibyaml && ref.safe.error !== undefined)
  if (refuses) {
    if (ours.errors.length === 0) return { outcome: 'disagree', why: 'PyYAML refuses, rulekeeper reads' }
    const e = ours.errors[0]!
    const lines = text.split('\n').length
    if (!(e.line! >= 1 && e.line! <= lines + 1 && e.column! >= 1))
      return { outcome: 'disagree', why: `refusal not located: ${JSON.stringify(e)}` }
    return { outcome: 'refused-both' }
  }
  if (ours.errors.length > 0)
    return { outcome: 'disagree', why: `PyYAML reads, rulekeeper refuses: ${ours.errors[0]!.message}` }
  const a = canonical(expected.value)
  const b = canonical(ours.value ?? null)
  if (a !== b) return { outcome: 'disagree', why: `values differ: PyYAML ${a} rulekeeper ${b}` }
  return { outcome: viaLibyaml ? 'same-as-libyaml' : 'same' }
}

// ---- the generator ----------------------------------------------------------------------------

/** mulberry32: deterministic, so a failing case reproduces from its index. */
function random(seed: number): () => number {
  let s = seed
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** Plain scalars, the YAML 1.1 words and forms among them (they resolve by YAML 1.2 here). */
const PLAIN = [
  'value',
  'Okta.Login.Failed',
  'a b c',
  'yes',
  'no',
  'on',
  'off',
  'Yes',
  'NO',
  'On',
  'OFF',
  'y',
  'n',
  'true',
  'False',
  'TRUE',
  'null',
  'Null',
  '~',
  '2024-01-01',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14 21:59:43.10 -5',
  '1:20',
  '190:20:30',
  '0o17',
  '017',
  '0x1F',
  '1_000',
  '0b101',
  '1e3',
  '1.5',
  '-2',
  '+3',
  '0',
  '-0',
  '.inf',
  '-.Inf',
  '.NaN',
  'inf',
  '1.',
  '.5',
  '3.14159',
  '1e-3',
  '=',
  'http://x.y/z?q=1',
  'a#b',
  "it's",
  'say "hi"',
  'a:b',
  'é日本',
  'C:\\path',
]
const WORDS = ['alert', 'in', 'account', '{account}', 'user', 'x:y', "o'k", 'a"b', '1', 'yes', '-', '%', '#1', 'é']
const DQ = [
  'word',
  ' ',
  '\\"',
  '\\\\',
  '\\t',
  '\\n',
  '\\x41',
  '\\u00e9',
  '\\U0001F600',
  "'",
  '#',
  ': ',
  '{x}',
  '\\/',
  '\\ ',
  '\\_',
  '\\e',
]
const SQ = ['word', ' ', "''", '"', '\\', '#', ': ', '{x}', '\\n']
const KEYS = ['RuleID', 'AlertTitle', 'Description', 'Severity', 'Tags', 'Tests', 'Name', 'Log', 'Runbook', 'Reference']

class Gen {
  private readonly rnd: () => number
  private anchors: string[] = []
  private mapAnchors: string[] = []
  private nextAnchor = 0
  constructor(seed: number) {
    this.rnd = random(seed)
  }
  chance(p: number): boolean {
    return this.rnd() < p
  }
  int(n: number): number {
    return Math.floor(this.rnd() * n)
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!
  }

  /** Continuation lines of a quoted scalar: any indentation, column 0 included, blank lines, tabs. */
  private continuation(pieces: readonly string[], double: boolean): string {
    let s = ''
    const lines = 1 + this.int(3)
    for (let i = 0; i < lines; i++) {
      let line = Array.from({ length: 1 + this.int(3) }, () => this.pick(pieces)).join('')
      if (this.chance(0.15)) line += ' '
      if (double && this.chance(0.15)) line += '\\'
      s += `${line}\n`
      if (this.chance(0.2)) s += '\n'
      s += this.pick(['', '', '', ' ', '  ', '    ', '        ', '\t', ' \t'])
    }
    return s
  }

  private quoted(): string {
    const double = this.chance(0.6)
    const pieces = double ? DQ : SQ
    const q = double ? '"' : "'"
    let body = Array.from({ length: this.int(4) }, () => this.pick(pieces)).join('')
    if (this.chance(0.5)) body += this.continuation(pieces, double) + this.pick(pieces)
    return q + body + q
  }

  private plain(indent: number): string {
    let s = this.pick(PLAIN)
    if (this.chance(0.2)) {
      // A multi-line plain scalar: continuation lines must be more indented than the collection.
      const lines = 1 + this.int(2)
      for (let i = 0; i < lines; i++) {
        if (this.chance(0.2)) s += '\n'
        const deeper = this.chance(0.9)
        const col = deeper ? indent + 1 + this.int(4) : this.int(indent + 1)
        s += `\n${' '.repeat(col)}${this.pick(WORDS)} ${this.pick(WORDS)}`
      }
    }
    return s
  }

  private block(indent: number): string {
    const style = this.pick(['|', '>'])
    const chomp = this.pick(['', '', '-', '+'])
    const explicit = this.chance(0.25) ? 1 + this.int(3) : 0
    const header = style + (this.chance(0.5) ? chomp + (explicit || '') : (explicit || '') + chomp)
    const at = indent + (explicit || 2)
    const pad = ' '.repeat(at)
    const lines: string[] = []
    if (this.chance(0.2)) lines.push('')
    const n = 1 + this.int(4)
    for (let i = 0; i < n; i++) {
      const extra = (i > 0 || explicit) && this.chance(0.2) ? '  ' : ''
      lines.push(
        pad + extra + this.pick(['text', 'more text', '# not a comment', 'x: y', '- item', '"q"', "it's", 'a\tb']),
      )
      if (this.chance(0.2)) lines.push(this.chance(0.8) ? '' : pad)
    }
    for (let i = this.int(3); i > 0; i--) lines.push('')
    return `${header}\n${lines.join('\n')}`
  }

  private tagged(): string {
    return this.pick([
      '!!str 123',
      '!!str yes',
      '!!str "x"',
      '!!int "7"',
      '!!int 42',
      '!!float 1',
      '!!float "2.5"',
      '!!float .inf',
      '!!bool yes',
      '!!bool "false"',
      '!!bool On',
      '!!null ""',
      '!!null null',
      '!!timestamp 2024-01-01',
      '!<tag:yaml.org,2002:str> 5',
      '!!map {a: 1}',
      '!!seq [1, two]',
      '!!str',
    ])
  }

  private flow(): string {
    const item = () =>
      this.pick(['a', '1', 'yes', '"q, r"', "'s'", '~', '2024-01-01', 'x y', '[n]', '{k: v}', '.5', '!!str 1'])
    if (this.chance(0.5)) return `[${Array.from({ length: this.int(4) }, item).join(', ')}]`
    const keys = ['p', 'q', '"r s"', 'yes', 't']
    return `{${keys
      .slice(0, this.int(4))
      .map((k) => `${k}: ${item()}`)
      .join(', ')}}`
  }

  private anchor(): string {
    const name = `a${this.nextAnchor++}`
    return name
  }

  /** A value after `key:` or `- ` on a line whose block collection is at column `indent`. */
  value(indent: number, depth: number, inSeq = false): string {
    if (this.anchors.length > 0 && this.chance(0.06)) return `*${this.pick(this.anchors)}`
    const r = this.rnd()
    let anchor = ''
    let name = ''
    if (this.chance(0.1)) {
      name = this.anchor()
      anchor = `&${name} `
    }
    let v: string
    let isMap = false
    if (r < 0.25) v = this.quoted()
    else if (r < 0.45) v = this.plain(indent)
    else if (r < 0.55) v = this.block(indent)
    else if (r < 0.62) v = this.tagged()
    else if (r < 0.7) v = this.flow()
    else if (depth < 3 && r < 0.85) {
      isMap = true
      v = `\n${this.map(indent + 2, depth + 1)}`
    } else if (depth < 3) v = `\n${this.seq(!inSeq && this.chance(0.5) ? indent : indent + 2, depth + 1)}`
    else v = this.pick(PLAIN)
    if (name) {
      // Registered once complete, so an alias never refers to a node still open.
      this.anchors.push(name)
      if (isMap) this.mapAnchors.push(name)
    }
    if (anchor && v.startsWith('\n')) return `${anchor.trim()}${v}`
    return anchor + v
  }

  map(indent: number, depth: number): string {
    const pad = ' '.repeat(indent)
    const keys = [...KEYS].sort(() => this.rnd() - 0.5).slice(0, 1 + this.int(4))
    const lines: string[] = []
    if (this.mapAnchors.length > 0 && this.chance(0.2)) {
      const merged =
        this.chance(0.6) || this.mapAnchors.length < 2
          ? `*${this.pick(this.mapAnchors)}`
          : `[*${this.pick(this.mapAnchors)}, *${this.pick(this.mapAnchors)}]`
      lines.push(`${pad}<<: ${merged}`)
    }
    for (const k of keys) {
      const key = this.chance(0.1) ? `"${k}"` : this.chance(0.05) ? `'${k}'` : k
      const comment = this.chance(0.1) ? ' # note' : ''
      const v = this.value(indent, depth)
      if (v.startsWith('\n')) lines.push(`${pad}${key}:${v}`)
      else lines.push(`${pad}${key}: ${v}${v.includes('\n') ? '' : comment}`)
      if (this.chance(0.05)) lines.push(`${pad}# a comment`)
    }
    return lines.join('\n')
  }

  seq(indent: number, depth: number): string {
    const pad = ' '.repeat(indent)
    return Array.from({ length: 1 + this.int(3) }, () => {
      const v = this.value(indent, depth, true)
      // A nested collection either starts on the dash's line (compact) or on the next one.
      if (v.startsWith('\n')) return this.chance(0.5) ? `${pad}- ${v.slice(1).trimStart()}` : `${pad}-${v}`
      return `${pad}- ${v}`
    }).join('\n')
  }

  document(): string {
    this.anchors = []
    this.mapAnchors = []
    let text = `${this.map(0, 0)}\n`
    if (this.chance(0.1)) text = `# leading comment\n${text}`
    if (this.chance(0.1)) text = `---\n${text}`
    if (this.chance(0.05)) text += '...\n'
    return text
  }

  /** One small edit of a text: most make it invalid; each must then be refused by both readers. */
  mutate(text: string): string {
    const at = this.int(text.length + 1)
    const op = this.rnd()
    if (op < 0.5) {
      const piece = this.pick([
        ':',
        '"',
        "'",
        '\t',
        '- ',
        '[',
        '{',
        '}',
        '&',
        '*',
        '!',
        '#',
        '|',
        '>',
        ' ',
        '\n',
        ': x',
        '\\',
      ])
      return text.slice(0, at) + piece + text.slice(at)
    }
    if (op < 0.8) return text.slice(0, at) + text.slice(at + 1 + this.int(3))
    const lines = text.split('\n')
    const i = this.int(lines.length)
    lines[i] = this.chance(0.5) ? ` ${lines[i]}` : lines[i]!.replace(/^ {1,2}/, '')
    return lines.join('\n')
  }
}

// A fixed seed and size keep the test deterministic and quick; the variables widen a search.
const SEED = Number(process.env.RK_YAML_SEED ?? 0x13_5eed)
const GENERATED = Number(process.env.RK_YAML_CASES ?? 500)
const MUTATED = Math.round(GENERATED * 0.6)

t.test(
  'generated texts: rulekeeper reads what PyYAML reads, to the same value',
  { skip: !hasPyYaml && 'no PyYAML' },
  async (t) => {
    const gen = new Gen(SEED)
    const texts: string[] = []
    for (let i = 0; i < GENERATED; i++) texts.push(gen.document())
    for (let i = 0; i < MUTATED; i++) texts.push(gen.mutate(texts[i % GENERATED]!))
    const started = performance.now()
    const refs = pyyaml(texts)
    t.equal(refs.length, texts.length, 'PyYAML answered every text')
    const counts: Record<Outcome, number> = { same: 0, 'same-as-libyaml': 0, 'refused-both': 0, disagree: 0 }
    let lenient = 0
    for (const [i, text] of texts.entries()) {
      const ours = readYaml(text)
      const { outcome, why } = compare(text, refs[i]!, ours)
      counts[outcome]++
      if (ours.parsed && ours.errors.length === 0) lenient++
      if (outcome === 'disagree') t.fail(`case ${i}: ${why}`, { text: JSON.stringify(text), pyyaml: refs[i] })
    }
    t.equal(counts.disagree, 0, 'no disagreement')
    t.ok(counts.same > GENERATED * 0.6, `read to the same value: ${counts.same}`)
    t.ok(counts['refused-both'] > 20, `refused by both, located: ${counts['refused-both']}`)
    t.comment(
      `${texts.length} texts: ${counts.same} same value, ${counts['same-as-libyaml']} same value as libyaml ` +
        `(tabs PyYAML's Python scanner refuses), ${counts['refused-both']} refused by both, ` +
        `${counts.disagree} disagreements; ${lenient} read by the full reader; ` +
        `${Math.round(performance.now() - started)} ms`,
    )
  },
)

// ---- pinned cases -----------------------------------------------------------------------------

const RULE_WITH_COLUMN0_TITLE = `AnalysisType: rule
RuleID: AWS.Console.Login
DisplayName: Console login
Enabled: true
LogTypes:
  - AWS.CloudTrail
Severity: Medium
AlertTitle: "Console login by {actor}
in account {account}"
Description: 'A person signed in to the console
without MFA; see the runbook.'
Detection:
  - KeyPath: eventName
    Condition: Equals
    Value: ConsoleLogin
`

const PINNED: Array<{ name: string; text: string; value?: unknown; refusedAt?: { line: number; column: number } }> = [
  {
    name: 'AlertTitle in double quotes continued at column 0 (the issue)',
    text: RULE_WITH_COLUMN0_TITLE,
  },
  { name: 'double-quoted, column 0', text: 'a: "x\ny"\n', value: { a: 'x y' } },
  { name: 'single-quoted, column 0', text: "a: 'x\ny'\n", value: { a: 'x y' } },
  { name: 'column 0 in a nested map', text: 'a:\n  b: "x\ny"\n', value: { a: { b: 'x y' } } },
  { name: 'column 0 in a sequence item', text: 'k:\n- "a\nb"\n', value: { k: ['a b'] } },
  { name: 'blank lines and an escaped line break', text: 'a: "x\n\n\ny \\\nz"\n', value: { a: 'x\n\ny z' } },
  { name: 'a tab starting the continuation', text: 'a: "x\n\ty"\n', value: { a: 'x y' } },
  { name: 'in a flow mapping', text: '{a: "x\ny", b: 1}\n', value: { a: 'x y', b: 1 } },
  {
    name: 'YAML 1.1 words stay strings',
    text: 'a: [yes, no, on, off, 2024-01-01]\n',
    value: { a: ['yes', 'no', 'on', 'off', '2024-01-01'] },
  },
  {
    name: 'merge keys',
    text: 'b: &b {x: 1, y: 2}\na:\n  <<: *b\n  x: 3\n',
    value: { b: { x: 1, y: 2 }, a: { x: 3, y: 2 } },
  },
  {
    name: 'explicit tags',
    text: 'a: [!!str 1, !!int "2", !!float 3, !!bool yes, !!timestamp 2024-01-01]\n',
    value: { a: ['1', 2, 3, true, '2024-01-01'] },
  },
  {
    name: 'a document marker inside a quoted scalar is refused, located',
    text: 'a: "x\n--- y"\n',
    refusedAt: { line: 1, column: 6 },
  },
  {
    name: 'a plain scalar continued at column 0 is refused, located (PyYAML refuses it too)',
    text: 'a: x\ny\n',
    refusedAt: { line: 2, column: 1 },
  },
  {
    name: 'an unknown local tag is refused at its original column after a column-0 continuation',
    text: '{a: "x\ny", b: !foo 1}\n',
    refusedAt: { line: 2, column: 8 },
  },
  {
    name: 'a duplicate key is refused (ruamel, PAT’s reader, refuses it; PyYAML keeps the last)',
    text: 'a: 1\na: 2\n',
    refusedAt: { line: 2, column: 1 },
  },
]

t.test('pinned cases', async (t) => {
  const refs = hasPyYaml ? pyyaml(PINNED.map((c) => c.text)) : []
  for (const [i, c] of PINNED.entries()) {
    const ours = readYaml(c.text)
    if (c.refusedAt) {
      t.ok(ours.errors.length > 0, `${c.name}: refused`)
      t.match(ours.errors[0], c.refusedAt, `${c.name}: located`)
    } else {
      t.same(ours.errors, [], `${c.name}: read`)
      if (c.value !== undefined) t.same(ours.value, c.value, `${c.name}: value`)
    }
    // PyYAML agrees, except on duplicate keys (documented: PAT refuses them).
    if (hasPyYaml && !c.name.startsWith('a duplicate key')) {
      const { outcome, why } = compare(c.text, refs[i]!, ours)
      t.not(outcome, 'disagree', `${c.name}: PyYAML agrees ${why ?? ''}`)
    }
  }
})

t.test('the loader reads the rule whose AlertTitle continues at column 0', async (t) => {
  const file = parseAnalysisFile('rules/console_login.yml', RULE_WITH_COLUMN0_TITLE)
  t.same(file.problems, [])
  t.equal(file.kind, 'simple')
  t.equal(file.id, 'AWS.Console.Login')
  t.equal(file.data?.AlertTitle, 'Console login by {actor} in account {account}')
  t.equal(file.data?.Description, 'A person signed in to the console without MFA; see the runbook.')
  t.same(file.locate(['Detection']), { line: 12, column: 1 })
})

t.test('a file that cannot be read is a located problem, never silence', async (t) => {
  for (const text of ['a: "x\n--- y"\n', 'a: [1, 2\n', 'a: !foo 1\n', `${'['.repeat(300)}${']'.repeat(300)}\n`]) {
    const file = parseAnalysisFile('rules/broken.yml', text)
    t.ok(file.problems.length > 0, `refused: ${JSON.stringify(text.slice(0, 20))}`)
    for (const p of file.problems) t.ok(p.line! >= 1 && p.column! >= 1, `located: ${p.message}`)
  }
})
