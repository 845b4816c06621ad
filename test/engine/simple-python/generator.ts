// A seeded generator of simple rules and events for the differential test: every condition (and
// spelling), every key-specifier form, every shape, inline filters and alert fields, over events
// drawn from one small vocabulary so that fields, types and operands collide often (right type,
// wrong type, null, missing, lists, bool vs number, int vs float, IPs, case variants).
import { ACCEPTED_CONDITION_NAMES, canonicalCondition, CONDITIONS } from '../../../src/engine/simple/index.js'
import type { Random as Rng } from '../../helpers/seeded-random.js'

const pick = <T>(r: Rng, a: readonly T[]): T => a[Math.floor(r() * a.length)]!
const chance = (r: Rng, p: number) => r() < p

export const STRINGS = [
  '',
  'admin',
  'Admin',
  'ADMIN',
  'xadminx',
  'min',
  'ad',
  'in',
  'true',
  '1',
  '5',
  '1.5',
  'x.y',
  ' admin',
  'a b',
  'ÉCOLE',
  'école',
  'straße',
  'STRASSE',
  'İstanbul',
  'ΣΑΣ',
  'σας',
  'ǅ',
  'ﬀ',
  '😀',
  'K',
  '10.0.0.1',
  '10.255.0.1',
  '11.0.0.1',
  '8.8.8.8',
  '192.168.1.20',
  '100.64.0.1',
  '192.0.0.9',
  '192.0.0.8',
  '127.0.0.1',
  '::1',
  '::ffff:10.0.0.1',
  '::ffff:8.8.8.8',
  '::10.0.0.1',
  'fe80::1%eth0',
  'fe80::1%a/b',
  '2001:db8::1',
  '2001:4860::1',
  '64:ff9b:1::1',
  '2002::1',
  '3fff::1',
  '1.2.3',
  ' 10.0.0.1',
  '010.0.0.1',
  '10.0.0.0/8',
  'not an ip',
  '::',
  '1::',
]
const IPS = STRINGS.slice(STRINGS.indexOf('10.0.0.1'))
// Text that must survive JSON and Python literals unchanged (quotes, escapes, controls, U+2028).
STRINGS.push('quo"te\\', "it's", 'new\nline\t', '\u0000nul', '\u2028', '{a}', '"""', '\\x41')
export const NUMBERS = [0, 1, -1, 5, 10, 1.5, 10.5, 9.99, -0.5, 1e21, 1e-7, 2 ** 53, 4, 100, 0.1]
// Half of all strings come from this short list, so that operands and event values meet often.
const HOT = ['admin', 'Admin', 'xadminx', 'ad', '10.0.0.1', '8.8.8.8', '::ffff:10.0.0.1', 'fe80::1%eth0', 'ÉCOLE']
const str = (r: Rng): string => (r() < 0.5 ? pick(r, HOT) : pick(r, STRINGS))
const CIDRS = [
  '10.0.0.0/8',
  '192.168.1.77/24',
  '0.0.0.0/0',
  '::/0',
  '2001:db8::/32',
  '::ffff:0:0/96',
  '100.64.0.0/10',
  'fe80::/10',
  '10.0.0.1',
  '::/96',
]

const TOP = ['a', 'b', 'c', 'A', 'x.y', 'x', 'n', 'ip', 'ips', 'l', 'items', 'constructor']
const ELEMENT_FIELDS = ['a', 'b', 'n', 'tags']

function scalar(r: Rng): unknown {
  const k = r()
  if (k < 0.5) return str(r)
  if (k < 0.8) return pick(r, NUMBERS)
  if (k < 0.9) return chance(r, 0.5)
  return null
}

function value(r: Rng, depth: number): unknown {
  const k = r()
  if (depth <= 0 || k < 0.7) return scalar(r)
  if (k < 0.85) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth - 1))
  const o: Record<string, unknown> = {}
  for (const f of ELEMENT_FIELDS) if (chance(r, 0.5)) o[f] = value(r, depth - 1)
  // Integer-like keys: JavaScript writes them first in JSON (titles and dedup keys must agree).
  if (chance(r, 0.2)) o['10'] = scalar(r)
  if (chance(r, 0.2)) o['2'] = scalar(r)
  return o
}

function element(r: Rng): unknown {
  if (chance(r, 0.15)) return scalar(r)
  const o: Record<string, unknown> = {}
  for (const f of ELEMENT_FIELDS)
    if (chance(r, 0.7))
      o[f] = f === 'tags' && chance(r, 0.7) ? Array.from({ length: Math.floor(r() * 3) }, () => scalar(r)) : value(r, 1)
  return o
}

/** One event over the shared vocabulary; every field may be missing, null, or of any type. */
export function event(r: Rng): Record<string, unknown> {
  const ev: Record<string, unknown> = {}
  for (const f of TOP) {
    if (!chance(r, f === 'constructor' ? 0.1 : 0.75)) continue
    if (f === 'ip') ev[f] = chance(r, 0.8) ? pick(r, IPS) : scalar(r)
    else if (f === 'ips')
      ev[f] = chance(r, 0.8) ? Array.from({ length: Math.floor(r() * 3) }, () => pick(r, IPS)) : scalar(r)
    else if (f === 'l' || f === 'items')
      ev[f] = chance(r, 0.85) ? Array.from({ length: Math.floor(r() * 4) }, () => element(r)) : value(r, 1)
    else if (f === 'x') ev[f] = chance(r, 0.8) ? { y: value(r, 1), z: scalar(r) } : scalar(r)
    else ev[f] = value(r, 2)
  }
  if (chance(r, 0.5))
    ev.p_enrichment = { t: chance(r, 0.85) ? { s: { a: value(r, 1), n: pick(r, NUMBERS), ip: pick(r, IPS) } } : null }
  return ev
}

export type KeyForm = 'Key' | 'DeepKey' | 'KeyPath' | 'KeyPath[n]' | 'KeyPath[*]' | 'KeyPath[*][*]' | 'Enrichment'

const KEY_CHOICES: Record<KeyForm, Array<Record<string, unknown>>> = {
  Key: ['a', 'b', 'A', 'x.y', 'n', 'ip', 'ips', 'constructor'].map((Key) => ({ Key })),
  DeepKey: [
    ['x', 'y'],
    ['l', 0, 'a'],
    ['items', 1, 'tags'],
    ['a', 0],
    ['ips', 0],
  ].map((DeepKey) => ({ DeepKey })),
  KeyPath: ['a', 'x.y', 'x.z', 'n', 'ip', 'ips', 'p_enrichment.t.s.a'].map((KeyPath) => ({ KeyPath })),
  'KeyPath[n]': ['l[0].a', 'ips[1]', 'items[0].tags[0]', 'a[0]', 'l[2]'].map((KeyPath) => ({ KeyPath })),
  'KeyPath[*]': ['l[*].a', 'items[*].n', 'ips[*]', 'l[*]', 'a[*]'].map((KeyPath) => ({ KeyPath })),
  'KeyPath[*][*]': ['items[*].tags[*]', 'l[*].tags[*]', 'a[*][*]'].map((KeyPath) => ({ KeyPath })),
  Enrichment: ['a', 'n', 'ip', 'a[0]'].map((FieldPath) => ({ Enrichment: { Table: 't', Selector: 's', FieldPath } })),
}
export const KEY_FORMS = Object.keys(KEY_CHOICES) as KeyForm[]
const ELEMENT_KEYS = [
  { Key: 'a' },
  { Key: 'n' },
  { KeyPath: 'tags' },
  { KeyPath: 'tags[*]' },
  { KeyPath: 'tags[0]' },
  { DeepKey: ['a', 0] },
]

/** What a generated rule used, so the test can prove every condition and shape was covered. */
export interface Coverage {
  conditions: Set<string>
  keyForms: Set<string>
  shapes: Set<string>
}

export function newCoverage(): Coverage {
  return { conditions: new Set(), keyForms: new Set(), shapes: new Set() }
}

function operandFor(r: Rng, name: string): Record<string, unknown> {
  const info = CONDITIONS[canonicalCondition(name)!]
  if (info.operand === 'values') {
    const k = r()
    const n = chance(r, 0.1) ? 0 : 1 + Math.floor(r() * 3)
    if (k < 0.5) return { Values: Array.from({ length: n }, () => str(r)) }
    if (k < 0.85) return { Values: Array.from({ length: n }, () => pick(r, NUMBERS)) }
    return { Values: Array.from({ length: n }, () => chance(r, 0.5)) }
  }
  if (info.operand === 'none') return chance(r, 0.1) ? { Value: 'ignored' } : {}
  switch (info.operandType) {
    case 'string':
      return { Value: str(r) }
    case 'number':
      return { Value: pick(r, NUMBERS) }
    case 'cidr':
      return { Value: pick(r, CIDRS) }
    default:
      return { Value: scalar(r) ?? str(r) }
  }
}

const VALUE_CONDITIONS = ACCEPTED_CONDITION_NAMES.filter((n) => {
  const op = CONDITIONS[canonicalCondition(n)!].operand
  return op === 'value' || op === 'values' || op === 'none'
})
const MULTI_CONDITIONS = VALUE_CONDITIONS.filter((n) => CONDITIONS[canonicalCondition(n)!].operand !== 'none')

function keySpec(r: Rng, cov: Coverage, inElement: boolean, filter: boolean): Record<string, unknown> {
  if (inElement) {
    cov.keyForms.add('element')
    return pick(r, ELEMENT_KEYS)
  }
  const forms: KeyForm[] = filter ? ['KeyPath', 'KeyPath[n]', 'KeyPath[*]', 'KeyPath[*][*]', 'Enrichment'] : KEY_FORMS
  const form = pick(r, forms)
  cov.keyForms.add(form)
  return pick(r, KEY_CHOICES[form])
}

/** Fields that hold strings, IPs and lists most often (for leaves that should often hold). */
const HOT_KEYS = [{ KeyPath: 'a' }, { KeyPath: 'b' }, { KeyPath: 'ip' }, { KeyPath: 'ips' }, { KeyPath: 'n' }]

export function leaf(
  r: Rng,
  cov: Coverage,
  opts: { inElement: boolean; filter: boolean; condition?: string; hot?: boolean },
): Record<string, unknown> {
  const condition = opts.condition ?? pick(r, VALUE_CONDITIONS)
  cov.conditions.add(condition)
  cov.shapes.add(opts.filter ? 'filter leaf' : 'leaf')
  const key = opts.hot ? pick(r, HOT_KEYS) : keySpec(r, cov, opts.inElement, opts.filter)
  return { ...key, Condition: condition, ...operandFor(r, condition) }
}

/** One match expression; `depth` bounds nesting. */
export function expression(r: Rng, cov: Coverage, depth: number, inElement = false): Record<string, unknown> {
  const k = r()
  if (depth <= 0 || k < 0.5) return leaf(r, cov, { inElement, filter: false })
  if (k < 0.62) {
    const condition = pick(r, MULTI_CONDITIONS)
    cov.conditions.add(condition)
    cov.shapes.add('multi-key')
    return { Condition: condition, Values: [keySpec(r, cov, inElement, false), keySpec(r, cov, inElement, false)] }
  }
  if (k < 0.77) {
    const op = pick(r, ['AnyElement', 'AllElements', 'OnlyOneElement', 'NoElement'])
    cov.conditions.add(op)
    cov.shapes.add(`comprehension ${op}`)
    const key = inElement
      ? { KeyPath: 'tags' }
      : pick(r, [
          { KeyPath: 'l' },
          { Key: 'items' },
          { KeyPath: 'items[*].tags' },
          { DeepKey: ['l'] },
          { Key: 'a' },
          { KeyPath: 'l[*].tags[*]' },
        ])
    const n = Math.floor(r() * 3)
    return { ...key, Condition: op, Expressions: Array.from({ length: n }, () => expression(r, cov, depth - 1, true)) }
  }
  if (k < 0.82) {
    const condition = pick(r, ['AlwaysTrue', 'AlwaysFalse'])
    cov.conditions.add(condition)
    cov.shapes.add('absolute')
    return { Condition: condition }
  }
  const op = pick(r, ['All', 'Any', 'OnlyOne', 'None'])
  const n = Math.floor(r() * 4)
  cov.shapes.add(`${op}${n === 0 ? ' empty' : ''}`)
  return { [op]: Array.from({ length: n }, () => expression(r, cov, depth - 1, inElement)) }
}

function filterExpression(r: Rng, cov: Coverage, depth: number): Record<string, unknown> {
  if (depth <= 0 || chance(r, 0.7)) return leaf(r, cov, { inElement: false, filter: true })
  const op = pick(r, ['All', 'Any'])
  cov.shapes.add(`filter ${op}`)
  return { [op]: Array.from({ length: Math.floor(r() * 3) }, () => filterExpression(r, cov, depth - 1)) }
}

const TITLE_PATHS = ['a', 'x.y', 'n', 'l', 'l[0].a', 'items[*].n', 'ips[*]', 'x', 'missing.field']

/** A whole rule: Detection (the first leaf uses `first` when given), maybe filters and alert fields. */
export function ruleData(r: Rng, cov: Coverage, id: string, first?: string): Record<string, unknown> {
  const detection = Array.from({ length: 1 + Math.floor(r() * 3) }, () => expression(r, cov, 3))
  if (first !== undefined) detection.unshift(leaf(r, cov, { inElement: false, filter: false, condition: first }))
  // Half the rules take their expressions as alternatives, so that matches are common too.
  const anyOf = chance(r, 0.5)
  if (anyOf) cov.shapes.add('Any')
  const data: Record<string, unknown> = {
    AnalysisType: 'rule',
    RuleID: id,
    Enabled: true,
    LogTypes: ['Test.Log'],
    Severity: pick(r, ['Info', 'LOW', 'High']),
    Detection: anyOf ? [{ Any: detection }] : detection,
  }
  if (chance(r, 0.35))
    data.InlineFilters = Array.from({ length: 1 + Math.floor(r() * 2) }, () => filterExpression(r, cov, 2))
  if (chance(r, 0.3)) {
    data.AlertTitle = `T {${pick(r, TITLE_PATHS)}} / {${pick(r, TITLE_PATHS)}} {x} {} {unclosed`
    cov.shapes.add('title')
  }
  if (chance(r, 0.25)) {
    data.AlertContext = [
      { KeyName: 'k1', KeyValue: keySpec(r, cov, false, false) },
      { KeyName: '2', KeyValue: keySpec(r, cov, false, false) },
    ]
    cov.shapes.add('context')
  }
  if (chance(r, 0.25)) {
    data.GroupBy = [keySpec(r, cov, false, false), keySpec(r, cov, false, false)]
    cov.shapes.add('dedup')
  }
  if (chance(r, 0.25)) {
    data.DynamicSeverities = [
      { ChangeTo: 'CRITICAL', Conditions: [expression(r, cov, 1)] },
      { ChangeTo: 'Low', Conditions: [] },
    ].slice(0, 1 + Math.floor(r() * 2))
    cov.shapes.add('severity')
  }
  return data
}
