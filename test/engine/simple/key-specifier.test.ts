// Key specifiers: every form (Key, DeepKey, KeyPath with indexes and [*], Enrichment) resolved to
// one of the three states — missing, null, or a value — table-driven over the same event.
import t from 'tap'
import { compileKeySpec, MISSING, parseKeyPath, formatKeyPath } from '../../../src/engine/simple/index.js'
import type { KeySpec } from '../../../src/engine/simple/index.js'
import { holds } from './helpers.js'

const EVENT = {
  'a.b': 'dotted',
  a: { b: [{ c: 1 }, { c: null }, { d: 2 }, { c: 3 }], n: null, s: 'str' },
  users: [
    { name: 'ann', roles: [{ id: 'r1' }, { id: 'r2' }] },
    { name: null, roles: [] },
    { roles: [{ id: 'r3' }, { id: null }] },
    null,
    'scalar',
  ],
  empty: [],
  nested: [[1, 2], [3], 4],
  nul: null,
  p_enrichment: { ipinfo: { src_ip: { city: 'Oslo', asn: { id: 42 }, tags: ['a', 'b'] } } },
  own: { constructor: 'mine', __proto__x: 1 },
}

function keyPath(text: string): KeySpec {
  const p = parseKeyPath(text, 256)
  if (!p.ok) throw new Error(p.message)
  return { kind: 'keyPath', text, segments: p.segments }
}
function enrichment(table: string, selector: string, fieldPath: string): KeySpec {
  const p = parseKeyPath(fieldPath, 256)
  if (!p.ok) throw new Error(p.message)
  return { kind: 'enrichment', table, selector, fieldPath, segments: p.segments }
}

const M = MISSING
const CASES: Array<[string, KeySpec, unknown]> = [
  ['Key takes a dot literally', { kind: 'key', name: 'a.b' }, 'dotted'],
  ['Key on a top-level object', { kind: 'key', name: 'nul' }, null],
  ['Key absent', { kind: 'key', name: 'zzz' }, M],
  ['Key does not reach Object.prototype', { kind: 'key', name: 'constructor' }, M],
  ['Key toString is not a field', { kind: 'key', name: 'toString' }, M],
  ['Key __proto__ is not a field', { kind: 'key', name: '__proto__' }, M],
  ['DeepKey walks objects and arrays', { kind: 'deepKey', steps: ['a', 'b', 0, 'c'] }, 1],
  ['DeepKey to null', { kind: 'deepKey', steps: ['a', 'b', 1, 'c'] }, null],
  ['DeepKey absent field', { kind: 'deepKey', steps: ['a', 'b', 2, 'c'] }, M],
  ['DeepKey index out of range', { kind: 'deepKey', steps: ['a', 'b', 9, 'c'] }, M],
  ['DeepKey string does not index an array', { kind: 'deepKey', steps: ['a', 'b', '0'] }, M],
  ['DeepKey integer does not index an object', { kind: 'deepKey', steps: ['a', 0] }, M],
  ['DeepKey through null is missing', { kind: 'deepKey', steps: ['a', 'n', 'x'] }, M],
  ['DeepKey through a string is missing', { kind: 'deepKey', steps: ['a', 's', 0] }, M],
  ['DeepKey own constructor field', { kind: 'deepKey', steps: ['own', 'constructor'] }, 'mine'],
  ['KeyPath dotted with index', keyPath('a.b[3].c'), 3],
  ['KeyPath to an object', keyPath('a.b[0]'), { c: 1 }],
  ['KeyPath to null', keyPath('a.n'), null],
  ['KeyPath index on an object is missing', keyPath('a[0]'), M],
  ['KeyPath out of range', keyPath('a.b[4]'), M],
  ['KeyPath [*] drops missing and null', keyPath('a.b[*].c'), [1, 3]],
  ['KeyPath [*] over an empty list is an empty list', keyPath('empty[*].x'), []],
  ['KeyPath [*] on a non-list is missing', keyPath('a.s[*]'), M],
  ['KeyPath [*] on null is missing', keyPath('nul[*]'), M],
  ['KeyPath [*] on an absent field is missing', keyPath('zzz[*].a'), M],
  [
    'KeyPath [*] alone drops null elements',
    keyPath('users[*]'),
    [EVENT.users[0], EVENT.users[1], EVENT.users[2], 'scalar'],
  ],
  ['KeyPath [*].name drops null names and scalars', keyPath('users[*].name'), ['ann']],
  ['KeyPath nested [*] flattens', keyPath('users[*].roles[*].id'), ['r1', 'r2', 'r3']],
  ['KeyPath [*][*] flattens nested lists', keyPath('nested[*][*]'), [1, 2, 3]],
  ['KeyPath [*] then index', keyPath('users[*].roles[0].id'), ['r1', 'r3']],
  ['Enrichment resolves under p_enrichment', enrichment('ipinfo', 'src_ip', 'city'), 'Oslo'],
  ['Enrichment with a dotted FieldPath', enrichment('ipinfo', 'src_ip', 'asn.id'), 42],
  ['Enrichment with an index', enrichment('ipinfo', 'src_ip', 'tags[1]'), 'b'],
  ['Enrichment of another selector is missing', enrichment('ipinfo', 'dst_ip', 'city'), M],
]

t.test('key specifiers resolve to missing, null or a value', async (t) => {
  for (const [name, spec, expected] of CASES) {
    t.same(compileKeySpec(spec)(EVENT), expected, name)
  }
})

t.test('a key specifier on a non-object event is missing', async (t) => {
  for (const ev of [null, 'text', 5, [1, 2]]) {
    t.equal(compileKeySpec({ kind: 'key', name: 'a' })(ev), MISSING)
    t.equal(compileKeySpec(keyPath('a.b'))(ev), MISSING)
  }
  t.equal(compileKeySpec(keyPath('[1]'))([1, 2]), 2, 'a bracket-only path indexes a list event')
})

t.test('every key-specifier form works inside a match expression', async (t) => {
  const rows: Array<[Record<string, unknown>, boolean]> = [
    [{ Key: 'a.b', Condition: 'Equals', Value: 'dotted' }, true],
    [{ DeepKey: ['a', 'b', 3, 'c'], Condition: 'Equals', Value: 3 }, true],
    [{ KeyPath: 'a.b[3].c', Condition: 'Equals', Value: 3 }, true],
    [{ KeyPath: 'users[*].roles[*].id', Condition: 'Contains', Value: 'r3' }, true],
    [{ KeyPath: 'users[*].roles[*].id', Condition: 'IsIn', Values: ['r9', 'r2'] }, true],
    [{ KeyPath: 'users[*].name', Condition: 'Equals', Value: 'ann' }, false],
    [{ KeyPath: 'empty[*].x', Condition: 'Exists' }, true],
    [{ KeyPath: 'empty[*].x', Condition: 'IsNullOrEmpty' }, true],
    [
      { Enrichment: { Table: 'ipinfo', Selector: 'src_ip', FieldPath: 'city' }, Condition: 'Equals', Value: 'Oslo' },
      true,
    ],
    [{ Enrichment: { Table: 'ipinfo', Selector: 'src_ip', FieldPath: 'country' }, Condition: 'DoesNotExist' }, true],
    [
      { Enrichment: { Table: 'ipinfo', Selector: 'src_ip', FieldPath: 'tags' }, Condition: 'IsIn', Values: ['b'] },
      true,
    ],
  ]
  for (const [expr, expected] of rows) t.equal(holds(expr, EVENT), expected, JSON.stringify(expr))
})

t.test('KeyPath syntax: good paths round-trip, bad ones say where', async (t) => {
  for (const p of ['a', 'a.b', 'a[0]', 'a[*].b', 'a.b[0][1].c', 'a b.c d', '[0]', 'a[*][*]']) {
    const r = parseKeyPath(p, 256)
    t.ok(r.ok, p)
    if (r.ok) t.equal(formatKeyPath(r.segments), p)
  }
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['a..b', /empty segment at character 3/],
    ['.a', /empty segment at character 1/],
    ['a.', /ends with a dot/],
    ['a[', /unclosed/],
    ['a[x]', /neither an index/],
    ['a[-1]', /neither an index/],
    ['a]', /without '\['/],
    ['a[0]b', /where '\.' or '\[' was expected at character 5/],
    ['a[99999999999]', /too large/],
  ]
  for (const [p, re] of bad) {
    const r = parseKeyPath(p, 256)
    t.notOk(r.ok, p)
    if (!r.ok) t.match(r.message, re, p)
  }
  const long = Array.from({ length: 300 }, () => 'a').join('.')
  const r = parseKeyPath(long, 256)
  t.notOk(r.ok)
  if (!r.ok) t.match(r.message, /more than 256 segments/)
})
