// The fast YAML reader (js-yaml) may only ever answer what the full reader (`yaml`'s document API)
// answers: for every text it accepts, the full reader reports no error and the same value (deep,
// strict: types, -0, NaN, prototypes). Checked on every example rule, a table of scalar forms in
// several positions, structural oddities, and thousands of mutations of real rule files.
import fs from 'node:fs'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import { loadYamlFast, locate, parseYaml } from '../../src/rules/yaml-text.js'
import { buildFileRecord } from '../../src/service/file-records.js'
import { createEngineRegistry } from '../../src/engine/registry.js'
import { mulberry32 } from '../helpers/seeded-random.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

function yamlFiles(dir: string): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...yamlFiles(p))
    else if (/\.ya?ml$/.test(e.name)) out.push(p)
  }
  return out
}

const corpus = [
  ...yamlFiles(path.join(ROOT, 'examples/rules')),
  ...yamlFiles(path.join(ROOT, 'rules-repo-template')),
].map((f) => fs.readFileSync(f, 'utf8'))

interface Verdict {
  accepted: boolean
  agrees: boolean
}

/** Whether the fast reader accepted `text`, and if so whether the full reader agrees exactly. */
function compare(text: string): Verdict {
  const fast = loadYamlFast(text)
  if (!fast) return { accepted: false, agrees: true }
  const full = parseYaml(text)
  return { accepted: true, agrees: full.errors.length === 0 && isDeepStrictEqual(fast.value, full.value) }
}

function check(t: { fail(message: string, extra: object): void }, text: string, label: string): Verdict {
  const v = compare(text)
  if (!v.agrees) {
    const full = parseYaml(text)
    t.fail(`fast and full readers disagree on ${label}`, {
      text,
      fast: loadYamlFast(text)?.value,
      full: full.value,
      errors: full.errors,
    })
  }
  return v
}

t.test('every example rule file: accepted by the fast reader, same value as the full reader', async (t) => {
  t.ok(corpus.length >= 10, `${corpus.length} example files`)
  for (const text of corpus) t.ok(check(t, text, 'an example file').accepted, 'accepted')
})

const SCALARS = [
  '1',
  '-1',
  '+1',
  '0',
  '-0',
  '00',
  '017',
  '0o17',
  '0o8',
  '0x1F',
  '0x1f',
  '0xG',
  '0b101',
  '1_000',
  '1,000',
  '1.5',
  '1.',
  '.5',
  '-.5',
  '1e3',
  '1E3',
  '1e+3',
  '1.5e-3',
  '.e3',
  'e3',
  '.inf',
  '.Inf',
  '.INF',
  '-.inf',
  '+.inf',
  '.nan',
  '.NaN',
  '.NAN',
  'inf',
  'nan',
  '9007199254740993',
  '123456789012345678901234567890',
  '1e400',
  '-1e400',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  'False',
  'FALSE',
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  'Yes',
  'ON',
  'null',
  'Null',
  'NULL',
  'nULL',
  '~',
  '',
  '2024-01-01',
  '2024-01-01T10:00:00Z',
  '2001-12-14 21:59:43.10 -5',
  '12:30',
  '1:20',
  '1:20:30',
  '190:20:30',
  "'quoted'",
  '"double"',
  "''",
  '""',
  "'it''s'",
  '"a\\tb"',
  '"\\x41\\u0042\\U0001F600"',
  '"\\N\\_\\L\\P"',
  '"\\e\\0\\a"',
  '"\\/"',
  '!!str 1',
  '!!int "7"',
  '!!float 1',
  '!!bool true',
  '!!null ""',
  '!!str',
  '!!binary aGk=',
  '!!timestamp 2024-01-01',
  '!foo bar',
  '!<tag:yaml.org,2002:str> x',
  'a b',
  'a  b',
  'a #not',
  'a#b',
  '-a',
  '- a',
  '?a',
  ':a',
  'a:b',
  'http://x.y/z?q=1',
  '*.exe',
  '@at',
  '`tick',
  '%pct',
  '|pipe',
  '>gt',
  '[a]',
  '{a: 1}',
  '[]',
  '{}',
  '&anchor 1',
  '*alias',
  '<<',
  '=',
  'é',
  '日本',
  '😀',
  '\u00a0x',
  'x\u00a0',
]

t.test('scalar forms as map values, sequence items, flow items and keys', async (t) => {
  let accepted = 0
  let total = 0
  for (const s of SCALARS) {
    for (const text of [
      `a: ${s}\n`,
      `- ${s}\n`,
      `a: [${s}]\n`,
      `a: {k: ${s}}\n`,
      `${s}: v\n`,
      `a:\n  - ${s}\n  - x\n`,
      `"a": ${s} # c\n`,
    ]) {
      total++
      if (check(t, text, JSON.stringify(text)).accepted) accepted++
    }
  }
  t.ok(accepted > total / 2, `the fast reader accepted ${accepted} of ${total}`)
})

const STRUCTURES = [
  'a: |\n  line1\n  line2\n',
  'a: |-\n  x\n\n',
  'a: |+\n  x\n\n',
  'a: >\n  folded\n  text\n\n  para\n',
  'a: >-\n  x\n  y\n',
  'a: |2\n    indented\n',
  'a: |\n\n  after blank\n',
  'a: plain\n  continued\n  lines\n',
  'a: "multi\n  line"\n',
  "a: 'multi\n\n  line'\n",
  'a: "esc \\\n  aped"\n',
  '---\na: 1\n',
  '--- \na: 1\n...\n',
  '%YAML 1.2\n---\na: 1\n',
  '%YAML 1.1\n---\na: yes\n',
  '%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n',
  'a: 1\n---\nb: 2\n',
  '',
  '# only a comment\n',
  '---\n',
  'a: 1\n...\n...\n',
  'a: 1\r\nb: 2\r\n',
  '\ufeffa: 1\n',
  'a:\t1\n',
  'a: 1\t\n',
  '\ta: 1\n',
  'a:\n\t- 1\n',
  '? a\n: 1\n',
  '? [a, b]\n: 1\n',
  '{[a]: 1}\n',
  '? |\n  k\n: v\n',
  'a: 1\na: 2\n',
  '{a: 1, a: 2}\n',
  'a: &x 1\nb: *x\n',
  'a: &x {k: 1}\nb: *x\n',
  'a: &x 1\n',
  'base: &b {k: 1}\nc:\n  <<: *b\n',
  '<<: {k: 1}\n',
  'a: [1, 2,]\n',
  'a: [1, , 2]\n',
  'a: {b: 1, }\n',
  'a: [a: 1, b]\n',
  'a: {b}\n',
  'a: {? b : 1}\n',
  'a: [\n  1,\n  2\n]\n',
  'a:\n- 1\n- 2\n',
  'a:\n  - b: 1\n    c: 2\n  - d\n',
  'a:\n  -\n    - 1\n',
  '- - - 1\n',
  'a: - 1\n',
  'a:\n  b: 1\n c: 2\n',
  '__proto__: {polluted: 1}\n',
  'constructor: 1\n',
  'toString: x\n',
  'a: {__proto__: 1}\n',
  'hasOwnProperty: 1\n',
  'a: "unterminated\n',
  "a: 'x\n",
  'a: [1, 2\n',
  'a: {b: 1\n',
  'a: b: c\n',
  ': v\n',
  'a: @x\n',
  'a: `x\n',
  'a: %x\n',
  'key with spaces: 1\n',
  '"quoted key": 1\n',
  "'single': 1\n",
  '1: int key\n',
  'true: bool key\n',
  'null: n\n',
  '~: n\n',
  '1.5: f\n',
  '[1]: x\n',
  'a: x # comment\n#c\nb: y#not\n',
  'a: "x"#c\n',
  'a: x\n  # indented comment\nb: y\n',
  'a:\n  b:\n    c:\n      d: [1, {e: [2]}]\n',
  `a: ${'x'.repeat(20_000)}\n`,
  `a: "${'\\u00e9'.repeat(500)}"\n`,
]

function nested(depth: number, flow: boolean): string {
  return flow
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}\n`
    : `${Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}k:`).join('\n')} 1\n`
}

t.test('structural forms, edge cases and nesting bounds', async (t) => {
  for (const text of STRUCTURES) check(t, text, JSON.stringify(text.slice(0, 80)))
  for (const d of [98, 99, 100, 101, 102, 150]) {
    check(t, nested(d, true), `flow nesting ${d}`)
    check(t, nested(d, false), `block nesting ${d}`)
  }
})

t.test('thousands of mutations of real rule files never make the readers disagree', async (t) => {
  // A deterministic generator (mulberry32), so a failure reproduces.
  const rnd = mulberry32(0x5eed)
  const pieces = [
    ' ',
    '  ',
    '\n',
    ':',
    ': ',
    '- ',
    '#',
    '"',
    "'",
    '[',
    ']',
    '{',
    '}',
    ',',
    '|',
    '>',
    '&a ',
    '*a',
    '!',
    '!!str ',
    '? ',
    '\t',
    '0x1',
    '.inf',
    'yes',
    '~',
    '---\n',
    '\\',
    '%',
  ]
  let accepted = 0
  const N = 4000
  for (let i = 0; i < N; i++) {
    let text = corpus[Math.floor(rnd() * corpus.length)]!
    const edits = 1 + Math.floor(rnd() * 3)
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rnd() * (text.length + 1))
      const op = rnd()
      if (op < 0.4) text = text.slice(0, at) + pieces[Math.floor(rnd() * pieces.length)] + text.slice(at)
      else if (op < 0.7) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rnd() * 4))
      else {
        const lines = text.split('\n')
        const li = Math.floor(rnd() * lines.length)
        lines[li] = rnd() < 0.5 ? ` ${lines[li]}` : lines[li]!.replace(/^ /, '')
        text = lines.join('\n')
      }
    }
    if (check(t, text, `mutation ${i}`).accepted) accepted++
  }
  t.ok(
    accepted > 0 && accepted < N,
    `the fast reader accepted ${accepted} of ${N} mutated files (the rest went to the full reader)`,
  )
})

t.test('the id position of a record is where the full reader locates the id key', async (t) => {
  const engines = createEngineRegistry({})
  const src = {
    engines,
    ctx: { findRule: () => undefined, findSupport: () => undefined },
    readFile: async () => undefined,
  }
  const variants = corpus.flatMap((text) => [
    text,
    `# leading comment\n\n${text}`,
    `---\n${text}`,
    text.replace(/^(RuleID|PolicyID|GlobalID|QueryName):/m, '$1 :'),
  ])
  variants.push(
    '{AnalysisType: rule, RuleID: Flow.Id, Detection: [{KeyPath: a, Condition: Exists}]}\n',
    '  AnalysisType: rule\n  RuleID: Indented.Id\n  Detection:\n    - KeyPath: a\n      Condition: Exists\n',
  )
  let checked = 0
  for (const text of variants) {
    const rec = await buildFileRecord('rules/x.yml', text, src)
    const full = parseYaml(text)
    const key = ['RuleID', 'PolicyID', 'GlobalID', 'QueryName'].find(
      (k) => full.value && typeof full.value === 'object' && k in (full.value as object),
    )
    if (!rec || !key) continue
    t.same(rec.idAt, locate(full, [key]), `id position of ${JSON.stringify(text.slice(0, 60))}`)
    checked++
  }
  t.ok(checked >= corpus.length * 3, `${checked} positions checked`)
})
