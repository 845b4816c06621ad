// The simple engine's own test tables, replayed through the transpiler: the condition rows of
// test/engine/simple/condition-table.ts (shared with conditions.test.ts) and the shapes and
// key-specifier cases of shapes.test.ts / key-specifier.test.ts, each turned into (rule, events)
// cases for the differential harness. Expected outcomes come from the TypeScript evaluator.
import type { Case } from './harness.js'
import { MISSING, NEGATION_OF, ROWS } from '../simple/condition-table.js'

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
      out.push({
        name: `conditions[${i}] Key ${condition}`,
        data: { RuleID: `T.${i}`, Severity: 'LOW', Detection: [{ Key: 'f', Condition: condition, ...row.operand }] },
        events,
      })
      out.push({
        name: `conditions[${i}] InlineFilters ${condition}`,
        data: {
          RuleID: `T.${i}`,
          Severity: 'LOW',
          Detection: [{ Condition: 'AlwaysTrue' }],
          InlineFilters: [{ KeyPath: 'f', Condition: condition, ...row.operand }],
        },
        events,
      })
    }
  })
  return out
}

const yes = { Condition: 'AlwaysTrue' }
const no = { Condition: 'AlwaysFalse' }
const rule = (name: string, data: Record<string, unknown>, events: unknown[]): Case => ({
  name,
  data: { RuleID: 'T.Shapes', Severity: 'LOW', ...data },
  events,
})

/** shapes.test.ts: combinators, comprehensions, multi-key, inline filters. */
export function shapeCases(): Case[] {
  const out: Case[] = []
  for (const op of ['All', 'Any', 'OnlyOne', 'None']) {
    for (const items of [
      [],
      [yes],
      [no],
      [yes, no],
      [no, yes, no],
      [yes, yes],
      [no, no],
      [yes, yes, yes, yes, yes, no],
    ]) {
      out.push(rule(`${op} ${items.length}`, { Detection: [{ [op]: items }] }, [{}]))
    }
  }
  const nested = {
    Any: [
      { All: [{ Key: 'a', Condition: 'Equals', Value: 1 }, { None: [{ Key: 'b', Condition: 'Exists' }] }] },
      {
        OnlyOne: [
          { Key: 'c', Condition: 'IsIn', Values: ['x', 'y'] },
          { Key: 'd', Condition: 'IsIn', Values: ['x', 'y'] },
        ],
      },
    ],
  }
  out.push(
    rule('nested combinators', { Detection: [nested] }, [
      { a: 1 },
      { a: 1, b: null },
      { a: 2, c: 'x' },
      { a: 2, c: 'x', d: 'y' },
      {},
    ]),
  )
  const admin = [
    { KeyPath: 'role', Condition: 'Equals', Value: 'admin' },
    { KeyPath: 'mfa.enabled', Condition: 'Equals', Value: false },
  ]
  const lists = [
    [
      { role: 'admin', mfa: { enabled: false } },
      { role: 'admin', mfa: { enabled: false } },
    ],
    [
      { role: 'admin', mfa: { enabled: false } },
      { role: 'admin', mfa: { enabled: true } },
    ],
    [{ role: 'user' }, { mfa: { enabled: false } }],
    [],
    [null, 'admin', 3],
    { role: 'admin', mfa: { enabled: false } },
    'admin',
    null,
  ]
  for (const op of ['AnyElement', 'AllElements', 'OnlyOneElement', 'NoElement']) {
    out.push(
      rule(`${op} users`, { Detection: [{ KeyPath: 'users', Condition: op, Expressions: admin }] }, [
        ...lists.map((users) => ({ users })),
        {},
      ]),
    )
  }
  out.push(
    rule(
      'nested comprehension',
      {
        Detection: [
          {
            KeyPath: 'groups',
            Condition: 'AnyElement',
            Expressions: [
              {
                Key: 'members',
                Condition: 'AllElements',
                Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }],
              },
            ],
          },
        ],
      },
      [
        { groups: [{ members: [{ active: false }] }, { members: [{ active: true }, { active: true }] }] },
        { groups: [{ members: [{ active: false }] }, { members: [] }] },
      ],
    ),
  )
  out.push(
    rule(
      'comprehension over a projection',
      {
        Detection: [
          {
            KeyPath: 'groups[*].members[*]',
            Condition: 'OnlyOneElement',
            Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }],
          },
        ],
      },
      [{ groups: [{ members: [{ active: false }] }, { members: [{ active: true }] }] }],
    ),
  )
  const multi: Array<[string, Record<string, unknown>]> = [
    ['Equals', { left: 'x', r: { v: 'x' } }],
    ['Equals', { left: 'x', r: { v: 'y' } }],
    ['Equals', { left: 1, r: { v: '1' } }],
    ['Equals', { left: 'x' }],
    ['Equals', { r: { v: 'x' } }],
    ['Equals', { left: null, r: { v: null } }],
    ['DoesNotEqual', { left: 'x', r: { v: 'y' } }],
    ['DoesNotEqual', { left: 'x' }],
    ['IEquals', { left: 'ABC', r: { v: 'abc' } }],
    ['IsGreaterThan', { left: 5, r: { v: 4 } }],
    ['IsGreaterThan', { left: 5, r: { v: '4' } }],
    ['IsLessThanOrEqual', { left: 4, r: { v: 4 } }],
    ['Contains', { left: ['a', 'b'], r: { v: 'b' } }],
    ['StartsWith', { left: 'abc', r: { v: 'ab' } }],
    ['StartsWith', { left: 'abc', r: { v: 1 } }],
    ['DoesNotStartWith', { left: 'abc', r: { v: 1 } }],
    ['IsIn', { left: 'b', r: { v: ['a', 'b'] } }],
    ['IsIn', { left: 'b', r: { v: 'b' } }],
    ['IsIn', { left: 'c', r: { v: ['a', 'b'] } }],
    ['IsNotIn', { left: 'c', r: { v: ['a', 'b'] } }],
    ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: '10.0.0.0/8' } }],
    ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: 'not a cidr' } }],
  ]
  const multiEvents = multi.map(([, ev]) => ev)
  for (const c of new Set(multi.map(([c]) => c))) {
    out.push(
      rule(
        `multi-key ${c}`,
        { Detection: [{ Condition: c, Values: [{ Key: 'left' }, { KeyPath: 'r.v' }] }] },
        multiEvents,
      ),
    )
  }
  const filterConditions: Array<Record<string, unknown>> = [
    { Condition: 'Equals', Value: 'x' },
    { Condition: 'DoesNotEqual', Value: 'x' },
    { Condition: 'IsIn', Values: ['x'] },
    { Condition: 'IsNotIn', Values: ['x'] },
    { Condition: 'Exists' },
    { Condition: 'DoesNotExist' },
    { Condition: 'IsNull' },
    { Condition: 'IsNotNull' },
    { Condition: 'IsNullOrEmpty' },
    { Condition: 'IsNotNullOrEmpty' },
    { Condition: 'IsGreaterThan', Value: 3 },
    { Condition: 'IsIPAddressPrivate' },
    { Condition: 'Contains', Value: 'x' },
    { Condition: 'DoesNotEndWith', Value: 'x' },
    { Condition: 'IsIPAddressNotInCIDR', Value: '10.0.0.0/8' },
  ]
  const filterEvents = [
    {},
    { f: 'not an object' },
    { f: null },
    { f: { g: null } },
    { f: { g: 'x' } },
    { f: { g: 5 } },
    { f: { g: '10.0.0.1' } },
  ]
  for (const c of filterConditions) {
    out.push(
      rule(`filter ${c.Condition}`, { Detection: [yes], InlineFilters: [{ KeyPath: 'f.g', ...c }] }, filterEvents),
    )
    out.push(
      rule(
        `filter enrichment ${c.Condition}`,
        { Detection: [yes], InlineFilters: [{ Enrichment: { Table: 't', Selector: 's', FieldPath: 'f' }, ...c }] },
        [{}, { p_enrichment: { t: { s: { f: 'x' } } } }, { p_enrichment: { t: { s: { f: null } } } }],
      ),
    )
  }
  out.push(
    rule(
      'filters with values and combinators',
      {
        Detection: [{ Key: 'action', Condition: 'Equals', Value: 'delete' }],
        InlineFilters: [
          { KeyPath: 'env', Condition: 'IsIn', Values: ['prod'] },
          {
            Any: [
              { KeyPath: 'user.type', Condition: 'Equals', Value: 'human' },
              { KeyPath: 'user.name', Condition: 'StartsWith', Value: 'svc-' },
            ],
          },
          { All: [] },
        ],
      },
      [
        { action: 'delete', env: 'prod', user: { type: 'human' } },
        { action: 'delete', env: 'dev', user: { type: 'human' } },
        { action: 'delete' },
        { action: 'delete', env: 'prod', user: { type: 'robot', name: 'bob' } },
        { action: 'delete', env: 'prod', user: { type: 'robot', name: 'svc-x' } },
        { action: 'read', env: 'prod' },
      ],
    ),
  )
  out.push(rule('filters Any: []', { Detection: [yes], InlineFilters: [{ Any: [] }] }, [{}]))
  return out
}

/** key-specifier.test.ts: every form resolved against its event, compared through AlertContext. */
export function keySpecCases(): Case[] {
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
  const specs: Array<Record<string, unknown>> = [
    { Key: 'a.b' },
    { Key: 'nul' },
    { Key: 'zzz' },
    { Key: 'constructor' },
    { Key: 'toString' },
    { Key: '__proto__' },
    { DeepKey: ['a', 'b', 0, 'c'] },
    { DeepKey: ['a', 'b', 1, 'c'] },
    { DeepKey: ['a', 'b', 2, 'c'] },
    { DeepKey: ['a', 'b', 9, 'c'] },
    { DeepKey: ['a', 'b', '0'] },
    { DeepKey: ['a', 0] },
    { DeepKey: ['a', 'n', 'x'] },
    { DeepKey: ['a', 's', 0] },
    { DeepKey: ['own', 'constructor'] },
    ...[
      'a.b[3].c',
      'a.b[0]',
      'a.n',
      'a[0]',
      'a.b[4]',
      'a.b[*].c',
      'empty[*].x',
      'a.s[*]',
      'nul[*]',
      'zzz[*].a',
      'users[*]',
      'users[*].name',
      'users[*].roles[*].id',
      'nested[*][*]',
      'users[*].roles[0].id',
    ].map((KeyPath) => ({ KeyPath })),
    ...['city', 'asn.id', 'tags[1]'].map((FieldPath) => ({
      Enrichment: { Table: 'ipinfo', Selector: 'src_ip', FieldPath },
    })),
    { Enrichment: { Table: 'ipinfo', Selector: 'dst_ip', FieldPath: 'city' } },
  ]
  return specs.map((spec, i) =>
    rule(
      `key spec ${JSON.stringify(spec)}`,
      {
        Detection: [{ ...spec, Condition: 'Exists' }],
        AlertContext: [{ KeyName: 'value', KeyValue: spec }],
        GroupBy: [spec],
        DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [{ ...spec, Condition: 'IsNullOrEmpty' }] }],
        ...(spec.KeyPath ? { AlertTitle: `value {${String(spec.KeyPath)}} #${i}` } : {}),
      },
      [EVENT, {}, { a: 'x' }],
    ),
  )
}

/** alert-fields.test.ts: title templates, the 1,000 cut, AlertContext, DynamicSeverities, GroupBy. */
export function alertFieldCases(): Case[] {
  const EVENT = {
    user: 'dana',
    n: 42,
    f: 1.5,
    b: false,
    nul: null,
    list: ['a', 1],
    obj: { k: 'v', n: [1] },
    'a.b': 'dotted',
    users: [{ name: 'x' }, { name: 'y' }, {}],
  }
  const events = [EVENT, {}, { n: 101, user: 'root' }, { n: 101, user: 'dana' }, { n: 11 }, { n: 1 }]
  const templates = [
    'plain text',
    '{user}',
    'user {user} did it',
    '{ user }',
    '{n}/{f}/{b}',
    '[{missing}]',
    '[{nul}]',
    '{list}',
    '{obj}',
    '{obj.n[0]}',
    '{users[*].name}',
    '{a.b}',
    '{}',
    '{ }',
    'open { only',
    '{{user}}',
    '}{user}{',
    'json-ish {"a": 1}',
    `${'x'.repeat(990)}{user}{user}`,
    'y'.repeat(1000),
    '😀'.repeat(1200),
    '',
  ]
  const out: Case[] = templates.map((AlertTitle, i) => rule(`title ${i}`, { Detection: [yes], AlertTitle }, events))
  out.push(
    rule(
      'context',
      {
        Detection: [yes],
        AlertContext: [
          { KeyName: 'actor', KeyValue: { Key: 'user' } },
          { KeyName: 'gone', KeyValue: { KeyPath: 'x.y' } },
          { KeyName: 'nothing', KeyValue: { Key: 'nul' } },
          { KeyName: 'names', KeyValue: { KeyPath: 'users[*].name' } },
          { KeyName: 'deep', KeyValue: { DeepKey: ['obj', 'n', 0] } },
          { KeyName: '__proto__', KeyValue: { Key: 'n' } },
        ],
      },
      events,
    ),
  )
  out.push(
    rule(
      'severities',
      {
        Severity: 'Medium',
        Detection: [yes],
        DynamicSeverities: [
          {
            ChangeTo: 'critical',
            Conditions: [
              { Key: 'n', Condition: 'IsGreaterThan', Value: 100 },
              { Key: 'user', Condition: 'Equals', Value: 'root' },
            ],
          },
          { ChangeTo: 'HIGH', Conditions: [{ Key: 'n', Condition: 'IsGreaterThan', Value: 100 }] },
          { ChangeTo: 'Info', Conditions: [{ Key: 'n', Condition: 'IsGreaterThan', Value: 10 }] },
        ],
      },
      events,
    ),
  )
  out.push(
    rule(
      'severity, empty conditions',
      { Severity: 'LOW', Detection: [yes], DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [] }] },
      events,
    ),
  )
  out.push(
    rule(
      'dedup',
      {
        Detection: [yes],
        GroupBy: [
          { Key: 'user' },
          { KeyPath: 'missing.x' },
          { Key: 'n' },
          { KeyPath: 'users[*].name' },
          { Key: 'nul' },
        ],
      },
      events,
    ),
  )
  out.push(
    rule(
      'all fields',
      {
        RuleID: 'R',
        Severity: 'high',
        Detection: [{ Key: 'user', Condition: 'Equals', Value: 'dana' }],
        AlertTitle: 'by {user}',
        AlertContext: [{ KeyName: 'n', KeyValue: { Key: 'n' } }],
        GroupBy: [{ Key: 'user' }],
      },
      [EVENT, { user: 'eli' }],
    ),
  )
  return out
}
