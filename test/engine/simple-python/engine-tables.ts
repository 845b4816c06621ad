// The simple engine's own test tables, replayed through the transpiler: the condition rows of
// test/engine/simple/conditions.test.ts (copied: that file does not export them) and the shapes and
// key-specifier cases of shapes.test.ts / key-specifier.test.ts, each turned into (rule, events)
// cases for the differential harness. Expected outcomes come from the TypeScript evaluator.
import { CONDITION_NAMES, positiveOf } from '../../../src/engine/simple/index.js'
import type { Case } from './harness.js'

const MISSING = Symbol('missing field')
type Cases = Array<[value: unknown, expected: boolean]>

interface Row {
  condition: string
  operand?: { Value: unknown } | { Values: unknown[] }
  right: Cases
  wrong: unknown[]
  null: boolean
  missing: boolean
  list: Cases
}

const T = true
const F = false
const ROWS: Row[] = [
  { condition: 'Equals', operand: { Value: 'admin' }, right: [['admin', T], ['Admin', F], ['admin ', F]], wrong: [1, true, { a: 'admin' }], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'Equals', operand: { Value: 5 }, right: [[5, T], [5.0, T], [6, F], [-5, F]], wrong: ['5', true], null: F, missing: F, list: [[[5], F]] },
  { condition: 'Equals', operand: { Value: 1.5 }, right: [[1.5, T], [1, F]], wrong: ['1.5'], null: F, missing: F, list: [[[1.5], F]] },
  { condition: 'Equals', operand: { Value: true }, right: [[true, T], [false, F]], wrong: ['true', 1], null: F, missing: F, list: [[[true], F]] },
  { condition: 'Equals', operand: { Value: false }, right: [[false, T], [true, F]], wrong: [0, '', 'false'], null: F, missing: F, list: [[[], F]] },
  { condition: 'Equals', operand: { Value: '' }, right: [['', T], [' ', F]], wrong: [0, false], null: F, missing: F, list: [[[''], F]] },
  { condition: 'IEquals', operand: { Value: 'AdMin' }, right: [['admin', T], ['ADMIN', T], ['admins', F]], wrong: [1, true], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IEquals', operand: { Value: 7 }, right: [[7, T], [8, F]], wrong: ['7'], null: F, missing: F, list: [[[7], F]] },
  { condition: 'Contains', operand: { Value: 'min' }, right: [['admin', T], ['ADMIN', F], ['xyz', F], ['min', T]], wrong: [123, true, { min: 1 }], null: F, missing: F, list: [[['admin', 'x'], T], [['x'], F], [['min'], T], [[1, 2], F], [[], F], [[['admin']], F]] },
  { condition: 'Contains', operand: { Value: 2 }, right: [[[1, 2, 3], T], [[1], F], [[2.0], T]], wrong: ['123', 2, true], null: F, missing: F, list: [[['2'], F], [[[2]], F]] },
  { condition: 'Contains', operand: { Value: true }, right: [[[false, true], T], [[false], F]], wrong: ['true', true], null: F, missing: F, list: [[['true'], F]] },
  { condition: 'IContains', operand: { Value: 'MIN' }, right: [['xAdMiNx', T], ['mi', F]], wrong: [1, false], null: F, missing: F, list: [[['ADMIN'], T], [['x', 'mIn'], T], [['mi'], F]] },
  { condition: 'StartsWith', operand: { Value: 'ad' }, right: [['admin', T], ['Admin', F], ['bad', F], ['ad', T]], wrong: [1, true], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IStartsWith', operand: { Value: 'AD' }, right: [['admin', T], ['Admin', T], ['bad', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'EndsWith', operand: { Value: 'in' }, right: [['admin', T], ['admins', F], ['adMIN', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IEndsWith', operand: { Value: 'IN' }, right: [['ADMIN', T], ['admIn', T], ['admins', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IsGreaterThan', operand: { Value: 10 }, right: [[11, T], [10, F], [10.5, T], [-20, F]], wrong: ['11', true, '9'], null: F, missing: F, list: [[[11], F]] },
  { condition: 'IsGreaterThanOrEquals', operand: { Value: 10 }, right: [[10, T], [9.99, F], [10.0, T]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsGreaterThanOrEqual', operand: { Value: 10 }, right: [[10, T], [9, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsGreaterThanOrEqualTo', operand: { Value: 10 }, right: [[10, T], [9, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThan', operand: { Value: 10 }, right: [[9, T], [10, F], [-1.5, T]], wrong: ['9', false], null: F, missing: F, list: [[[9], F]] },
  { condition: 'IsLessThanOrEquals', operand: { Value: 10 }, right: [[10, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThanOrEqual', operand: { Value: 10.5 }, right: [[10.5, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThanOrEqualTo', operand: { Value: 10 }, right: [[10, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsIn', operand: { Values: ['a', 'b'] }, right: [['a', T], ['c', F], ['A', F]], wrong: [1, true, { a: 1 }], null: F, missing: F, list: [[['x', 'b'], T], [['x'], F], [[], F], [[['a']], F]] },
  { condition: 'IsIn', operand: { Values: [1, 2] }, right: [[2, T], [2.0, T], [3, F]], wrong: ['2', true], null: F, missing: F, list: [[[5, 1], T], [['1'], F]] },
  { condition: 'IsIn', operand: { Values: [true] }, right: [[true, T], [false, F]], wrong: ['true', 1], null: F, missing: F, list: [[[false, true], T]] },
  { condition: 'IsIn', operand: { Values: [] }, right: [['a', F]], wrong: [1], null: F, missing: F, list: [[['a'], F]] },
  { condition: 'Exists', right: [['x', T], [0, T], [false, T], ['', T], [{}, T]], wrong: [], null: T, missing: F, list: [[[], T]] },
  { condition: 'IsNull', right: [['x', F], [0, F], [false, F], ['', F]], wrong: [], null: T, missing: T, list: [[[], F], [[null], F]] },
  { condition: 'IsNullOrEmpty', right: [['', T], ['x', F], [' ', F], [{}, T], [{ a: 1 }, F]], wrong: [0, false], null: T, missing: T, list: [[[], T], [[null], F], [[''], F]] },
  { condition: 'IsIPAddress', right: [['10.0.0.1', T], ['::1', T], ['fe80::1%eth0', T], ['::ffff:1.2.3.4', T], ['2001:db8::', T], ['10.0.0.256', F], ['010.0.0.1', F], ['127.1', F], ['1.2.3.4 ', F], ['', F], ['1:2:3:4:5:6:7:8:9', F], ['::ffff:1.2.3.04', F], ['fe80::1%', F], ['0x7f.0.0.1', F]], wrong: [167772161, true], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPv4Address', right: [['10.0.0.1', T], ['255.255.255.255', T], ['::1', F], ['1.2.3', F]], wrong: [1], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPv6Address', right: [['::1', T], ['::ffff:10.0.0.1', T], ['10.0.0.1', F], ['12345::', F]], wrong: [1], null: F, missing: F, list: [[['::1'], F]] },
  { condition: 'IsIPAddressPublic', right: [['8.8.8.8', T], ['10.1.2.3', F], ['100.64.0.1', F], ['192.0.0.9', T], ['192.0.0.8', F], ['255.255.255.255', F], ['2001:4860:4860::8888', T], ['fe80::1', F], ['2001:db8::1', F], ['::ffff:8.8.8.8', T], ['::ffff:10.0.0.1', F], ['not-an-ip', F]], wrong: [134744072], null: F, missing: F, list: [[['8.8.8.8'], F]] },
  { condition: 'IsIPAddressPrivate', right: [['10.1.2.3', T], ['172.31.255.255', T], ['172.32.0.0', F], ['100.64.0.1', F], ['8.8.8.8', F], ['192.0.0.9', F], ['192.0.0.8', T], ['127.0.0.1', T], ['fd00::1', T], ['2001:db8::1', T], ['::1', T], ['::ffff:192.168.1.1', T], ['2001:4860::1', F], ['bad', F]], wrong: [167837955], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '10.0.0.0/8' }, right: [['10.255.0.1', T], ['11.0.0.1', F], ['::ffff:10.0.0.1', F], ['bad', F]], wrong: [167772161], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '2001:db8::/32' }, right: [['2001:db8:1::1', T], ['2001:db9::1', F], ['10.0.0.1', F]], wrong: [1], null: F, missing: F, list: [[['2001:db8::1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '192.168.1.77/24' }, right: [['192.168.1.1', T], ['192.168.2.1', F]], wrong: [1], null: F, missing: F, list: [[['192.168.1.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '192.168.1.7' }, right: [['192.168.1.7', T], ['192.168.1.8', F]], wrong: [1], null: F, missing: F, list: [] },
  { condition: 'CIDRContainsIPAddresses', operand: { Value: '10.0.0.0/8' }, right: [['10.1.1.1', T], ['11.1.1.1', F]], wrong: [167772161, { ip: '10.0.0.1' }], null: F, missing: F, list: [[['1.1.1.1', '10.0.0.1'], T], [['1.1.1.1'], F], [[], F], [['bad', 10], F]] },
]

const NEGATION_OF = new Map<string, string>()
for (const name of CONDITION_NAMES) {
  const p = positiveOf(name)
  if (p !== undefined) NEGATION_OF.set(p, name)
}

const eventFor = (value: unknown): Record<string, unknown> => (value === MISSING ? { other: 1 } : { f: value })

/** Each condition row (and its negation), as a Key, a KeyPath and an inline filter over the same values. */
export function conditionCases(): Case[] {
  const out: Case[] = []
  ROWS.forEach((row, i) => {
    const values = [...row.right.map(([v]) => v), ...row.wrong, null, MISSING, ...row.list.map(([v]) => v)]
    const events = values.map(eventFor)
    const canonical = row.condition.replace(/OrEqual(To)?$/, 'OrEquals')
    for (const condition of [row.condition, NEGATION_OF.get(canonical)]) {
      if (condition === undefined) continue
      out.push({ name: `conditions[${i}] Key ${condition}`, data: { RuleID: `T.${i}`, Severity: 'LOW', Detection: [{ Key: 'f', Condition: condition, ...row.operand }] }, events })
      out.push({
        name: `conditions[${i}] InlineFilters ${condition}`,
        data: { RuleID: `T.${i}`, Severity: 'LOW', Detection: [{ Condition: 'AlwaysTrue' }], InlineFilters: [{ KeyPath: 'f', Condition: condition, ...row.operand }] },
        events,
      })
    }
  })
  return out
}

const yes = { Condition: 'AlwaysTrue' }
const no = { Condition: 'AlwaysFalse' }
const rule = (name: string, data: Record<string, unknown>, events: unknown[]): Case => ({ name, data: { RuleID: 'T.Shapes', Severity: 'LOW', ...data }, events })

/** shapes.test.ts: combinators, comprehensions, multi-key, inline filters. */
export function shapeCases(): Case[] {
  const out: Case[] = []
  for (const op of ['All', 'Any', 'OnlyOne', 'None']) {
    for (const items of [[], [yes], [no], [yes, no], [no, yes, no], [yes, yes], [no, no], [yes, yes, yes, yes, yes, no]]) {
      out.push(rule(`${op} ${items.length}`, { Detection: [{ [op]: items }] }, [{}]))
    }
  }
  const nested = {
    Any: [
      { All: [{ Key: 'a', Condition: 'Equals', Value: 1 }, { None: [{ Key: 'b', Condition: 'Exists' }] }] },
      { OnlyOne: [{ Key: 'c', Condition: 'IsIn', Values: ['x', 'y'] }, { Key: 'd', Condition: 'IsIn', Values: ['x', 'y'] }] },
    ],
  }
  out.push(rule('nested combinators', { Detection: [nested] }, [{ a: 1 }, { a: 1, b: null }, { a: 2, c: 'x' }, { a: 2, c: 'x', d: 'y' }, {}]))
  const admin = [{ KeyPath: 'role', Condition: 'Equals', Value: 'admin' }, { KeyPath: 'mfa.enabled', Condition: 'Equals', Value: false }]
  const lists = [
    [{ role: 'admin', mfa: { enabled: false } }, { role: 'admin', mfa: { enabled: false } }],
    [{ role: 'admin', mfa: { enabled: false } }, { role: 'admin', mfa: { enabled: true } }],
    [{ role: 'user' }, { mfa: { enabled: false } }],
    [],
    [null, 'admin', 3],
    { role: 'admin', mfa: { enabled: false } },
    'admin',
    null,
  ]
  for (const op of ['AnyElement', 'AllElements', 'OnlyOneElement', 'NoElement']) {
    out.push(rule(`${op} users`, { Detection: [{ KeyPath: 'users', Condition: op, Expressions: admin }] }, [...lists.map((users) => ({ users })), {}]))
  }
  out.push(
    rule('nested comprehension', { Detection: [{ KeyPath: 'groups', Condition: 'AnyElement', Expressions: [{ Key: 'members', Condition: 'AllElements', Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }] }] }] }, [
      { groups: [{ members: [{ active: false }] }, { members: [{ active: true }, { active: true }] }] },
      { groups: [{ members: [{ active: false }] }, { members: [] }] },
    ]),
  )
  out.push(
    rule('comprehension over a projection', { Detection: [{ KeyPath: 'groups[*].members[*]', Condition: 'OnlyOneElement', Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }] }] }, [
      { groups: [{ members: [{ active: false }] }, { members: [{ active: true }] }] },
    ]),
  )
  const multi: Array<[string, Record<string, unknown>]> = [
    ['Equals', { left: 'x', r: { v: 'x' } }], ['Equals', { left: 'x', r: { v: 'y' } }], ['Equals', { left: 1, r: { v: '1' } }],
    ['Equals', { left: 'x' }], ['Equals', { r: { v: 'x' } }], ['Equals', { left: null, r: { v: null } }],
    ['DoesNotEqual', { left: 'x', r: { v: 'y' } }], ['DoesNotEqual', { left: 'x' }], ['IEquals', { left: 'ABC', r: { v: 'abc' } }],
    ['IsGreaterThan', { left: 5, r: { v: 4 } }], ['IsGreaterThan', { left: 5, r: { v: '4' } }], ['IsLessThanOrEqual', { left: 4, r: { v: 4 } }],
    ['Contains', { left: ['a', 'b'], r: { v: 'b' } }], ['StartsWith', { left: 'abc', r: { v: 'ab' } }], ['StartsWith', { left: 'abc', r: { v: 1 } }],
    ['DoesNotStartWith', { left: 'abc', r: { v: 1 } }], ['IsIn', { left: 'b', r: { v: ['a', 'b'] } }], ['IsIn', { left: 'b', r: { v: 'b' } }],
    ['IsIn', { left: 'c', r: { v: ['a', 'b'] } }], ['IsNotIn', { left: 'c', r: { v: ['a', 'b'] } }],
    ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: '10.0.0.0/8' } }], ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: 'not a cidr' } }],
  ]
  const multiEvents = multi.map(([, ev]) => ev)
  for (const c of new Set(multi.map(([c]) => c))) {
    out.push(rule(`multi-key ${c}`, { Detection: [{ Condition: c, Values: [{ Key: 'left' }, { KeyPath: 'r.v' }] }] }, multiEvents))
  }
  const filterConditions: Array<Record<string, unknown>> = [
    { Condition: 'Equals', Value: 'x' }, { Condition: 'DoesNotEqual', Value: 'x' }, { Condition: 'IsIn', Values: ['x'] },
    { Condition: 'IsNotIn', Values: ['x'] }, { Condition: 'Exists' }, { Condition: 'DoesNotExist' }, { Condition: 'IsNull' },
    { Condition: 'IsNotNull' }, { Condition: 'IsNullOrEmpty' }, { Condition: 'IsNotNullOrEmpty' }, { Condition: 'IsGreaterThan', Value: 3 },
    { Condition: 'IsIPAddressPrivate' }, { Condition: 'Contains', Value: 'x' }, { Condition: 'DoesNotEndWith', Value: 'x' },
    { Condition: 'IsIPAddressNotInCIDR', Value: '10.0.0.0/8' },
  ]
  const filterEvents = [{}, { f: 'not an object' }, { f: null }, { f: { g: null } }, { f: { g: 'x' } }, { f: { g: 5 } }, { f: { g: '10.0.0.1' } }]
  for (const c of filterConditions) {
    out.push(rule(`filter ${c.Condition}`, { Detection: [yes], InlineFilters: [{ KeyPath: 'f.g', ...c }] }, filterEvents))
    out.push(rule(`filter enrichment ${c.Condition}`, { Detection: [yes], InlineFilters: [{ Enrichment: { Table: 't', Selector: 's', FieldPath: 'f' }, ...c }] }, [{}, { p_enrichment: { t: { s: { f: 'x' } } } }, { p_enrichment: { t: { s: { f: null } } } }]))
  }
  out.push(
    rule('filters with values and combinators', {
      Detection: [{ Key: 'action', Condition: 'Equals', Value: 'delete' }],
      InlineFilters: [
        { KeyPath: 'env', Condition: 'IsIn', Values: ['prod'] },
        { Any: [{ KeyPath: 'user.type', Condition: 'Equals', Value: 'human' }, { KeyPath: 'user.name', Condition: 'StartsWith', Value: 'svc-' }] },
        { All: [] },
      ],
    }, [
      { action: 'delete', env: 'prod', user: { type: 'human' } }, { action: 'delete', env: 'dev', user: { type: 'human' } }, { action: 'delete' },
      { action: 'delete', env: 'prod', user: { type: 'robot', name: 'bob' } }, { action: 'delete', env: 'prod', user: { type: 'robot', name: 'svc-x' } },
      { action: 'read', env: 'prod' },
    ]),
  )
  out.push(rule('filters Any: []', { Detection: [yes], InlineFilters: [{ Any: [] }] }, [{}]))
  return out
}

/** key-specifier.test.ts: every form resolved against its event, compared through AlertContext. */
export function keySpecCases(): Case[] {
  const EVENT = {
    'a.b': 'dotted',
    a: { b: [{ c: 1 }, { c: null }, { d: 2 }, { c: 3 }], n: null, s: 'str' },
    users: [{ name: 'ann', roles: [{ id: 'r1' }, { id: 'r2' }] }, { name: null, roles: [] }, { roles: [{ id: 'r3' }, { id: null }] }, null, 'scalar'],
    empty: [],
    nested: [[1, 2], [3], 4],
    nul: null,
    p_enrichment: { ipinfo: { src_ip: { city: 'Oslo', asn: { id: 42 }, tags: ['a', 'b'] } } },
    own: { constructor: 'mine', __proto__x: 1 },
  }
  const specs: Array<Record<string, unknown>> = [
    { Key: 'a.b' }, { Key: 'nul' }, { Key: 'zzz' }, { Key: 'constructor' }, { Key: 'toString' }, { Key: '__proto__' },
    { DeepKey: ['a', 'b', 0, 'c'] }, { DeepKey: ['a', 'b', 1, 'c'] }, { DeepKey: ['a', 'b', 2, 'c'] }, { DeepKey: ['a', 'b', 9, 'c'] },
    { DeepKey: ['a', 'b', '0'] }, { DeepKey: ['a', 0] }, { DeepKey: ['a', 'n', 'x'] }, { DeepKey: ['a', 's', 0] }, { DeepKey: ['own', 'constructor'] },
    ...['a.b[3].c', 'a.b[0]', 'a.n', 'a[0]', 'a.b[4]', 'a.b[*].c', 'empty[*].x', 'a.s[*]', 'nul[*]', 'zzz[*].a', 'users[*]', 'users[*].name',
      'users[*].roles[*].id', 'nested[*][*]', 'users[*].roles[0].id'].map((KeyPath) => ({ KeyPath })),
    ...['city', 'asn.id', 'tags[1]'].map((FieldPath) => ({ Enrichment: { Table: 'ipinfo', Selector: 'src_ip', FieldPath } })),
    { Enrichment: { Table: 'ipinfo', Selector: 'dst_ip', FieldPath: 'city' } },
  ]
  return specs.map((spec, i) =>
    rule(`key spec ${JSON.stringify(spec)}`, {
      Detection: [{ ...spec, Condition: 'Exists' }],
      AlertContext: [{ KeyName: 'value', KeyValue: spec }],
      GroupBy: [spec],
      DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [{ ...spec, Condition: 'IsNullOrEmpty' }] }],
      ...(spec.KeyPath ? { AlertTitle: `value {${String(spec.KeyPath)}} #${i}` } : {}),
    }, [EVENT, {}, { a: 'x' }]),
  )
}

/** alert-fields.test.ts: title templates, the 1,000 cut, AlertContext, DynamicSeverities, GroupBy. */
export function alertFieldCases(): Case[] {
  const EVENT = {
    user: 'dana', n: 42, f: 1.5, b: false, nul: null, list: ['a', 1], obj: { k: 'v', n: [1] }, 'a.b': 'dotted',
    users: [{ name: 'x' }, { name: 'y' }, {}],
  }
  const events = [EVENT, {}, { n: 101, user: 'root' }, { n: 101, user: 'dana' }, { n: 11 }, { n: 1 }]
  const templates = [
    'plain text', '{user}', 'user {user} did it', '{ user }', '{n}/{f}/{b}', '[{missing}]', '[{nul}]', '{list}', '{obj}', '{obj.n[0]}',
    '{users[*].name}', '{a.b}', '{}', '{ }', 'open { only', '{{user}}', '}{user}{', 'json-ish {"a": 1}',
    `${'x'.repeat(990)}{user}{user}`, 'y'.repeat(1000), '😀'.repeat(1200), '',
  ]
  const out: Case[] = templates.map((AlertTitle, i) => rule(`title ${i}`, { Detection: [yes], AlertTitle }, events))
  out.push(rule('context', {
    Detection: [yes],
    AlertContext: [
      { KeyName: 'actor', KeyValue: { Key: 'user' } }, { KeyName: 'gone', KeyValue: { KeyPath: 'x.y' } }, { KeyName: 'nothing', KeyValue: { Key: 'nul' } },
      { KeyName: 'names', KeyValue: { KeyPath: 'users[*].name' } }, { KeyName: 'deep', KeyValue: { DeepKey: ['obj', 'n', 0] } }, { KeyName: '__proto__', KeyValue: { Key: 'n' } },
    ],
  }, events))
  out.push(rule('severities', {
    Severity: 'Medium',
    Detection: [yes],
    DynamicSeverities: [
      { ChangeTo: 'critical', Conditions: [{ Key: 'n', Condition: 'IsGreaterThan', Value: 100 }, { Key: 'user', Condition: 'Equals', Value: 'root' }] },
      { ChangeTo: 'HIGH', Conditions: [{ Key: 'n', Condition: 'IsGreaterThan', Value: 100 }] },
      { ChangeTo: 'Info', Conditions: [{ Key: 'n', Condition: 'IsGreaterThan', Value: 10 }] },
    ],
  }, events))
  out.push(rule('severity, empty conditions', { Severity: 'LOW', Detection: [yes], DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [] }] }, events))
  out.push(rule('dedup', { Detection: [yes], GroupBy: [{ Key: 'user' }, { KeyPath: 'missing.x' }, { Key: 'n' }, { KeyPath: 'users[*].name' }, { Key: 'nul' }] }, events))
  out.push(rule('all fields', {
    RuleID: 'R', Severity: 'high', Detection: [{ Key: 'user', Condition: 'Equals', Value: 'dana' }],
    AlertTitle: 'by {user}', AlertContext: [{ KeyName: 'n', KeyValue: { Key: 'n' } }], GroupBy: [{ Key: 'user' }],
  }, [EVENT, { user: 'eli' }]))
  return out
}
