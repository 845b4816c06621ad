// Match-expression shapes beyond a single comparison: combinators (including empty ones), list
// comprehensions, multi-key comparisons, enrichment, absolute conditions and inline filters, whose
// leaves pass on a missing field.
import t from 'tap'
import { compileOrThrow, holds } from './helpers.js'

const yes = { Condition: 'AlwaysTrue' }
const no = { Condition: 'AlwaysFalse' }

t.test('combinators: all, any, exactly one, none — empty ones included', async (t) => {
  const rows: Array<[string, unknown[], boolean]> = [
    ['All', [], true],
    ['All', [yes], true],
    ['All', [yes, no], false],
    ['All', [yes, yes, yes, yes], true],
    ['All', [yes, yes, yes, no], false],
    ['All', [yes, yes, yes], true],
    ['All', [yes, no, yes], false],
    ['All', [yes, yes, yes, yes, yes], true],
    ['All', [yes, yes, yes, yes, no], false],
    ['All', [no, yes, yes, yes, yes], false],
    ['All', [yes, yes, yes, yes, yes, yes], true],
    ['All', [yes, yes, yes, yes, yes, no], false],
    ['Any', [], false],
    ['Any', [no], false],
    ['Any', [no, yes], true],
    ['Any', [no, no, no, no], false],
    ['OnlyOne', [], false],
    ['OnlyOne', [yes], true],
    ['OnlyOne', [no, yes, no], true],
    ['OnlyOne', [yes, yes], false],
    ['OnlyOne', [no, no], false],
    ['None', [], true],
    ['None', [no, no], true],
    ['None', [no, yes], false],
  ]
  for (const [op, items, expected] of rows)
    t.equal(holds({ [op]: items }, {}), expected, `${op} ${JSON.stringify(items.map((i) => i === yes))}`)
})

t.test('combinators nest freely and see the same event', async (t) => {
  const expr = {
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
  const rows: Array<[Record<string, unknown>, boolean]> = [
    [{ a: 1 }, true],
    [{ a: 1, b: null }, false],
    [{ a: 2, c: 'x' }, true],
    [{ a: 2, c: 'x', d: 'y' }, false],
    [{}, false],
  ]
  for (const [ev, expected] of rows) t.equal(holds(expr, ev), expected, JSON.stringify(ev))
})

t.test('Detection holds only when every expression holds', async (t) => {
  const rule = compileOrThrow({
    Detection: [
      { Key: 'a', Condition: 'Equals', Value: 1 },
      { Key: 'b', Condition: 'Equals', Value: 2 },
    ],
  })
  t.equal(rule.matches({ a: 1, b: 2 }), true)
  t.equal(rule.matches({ a: 1, b: 3 }), false)
  t.equal(rule.matches({ b: 2 }), false)
})

t.test('list comprehension over lists of objects, with paths relative to the element', async (t) => {
  const admin = [
    { KeyPath: 'role', Condition: 'Equals', Value: 'admin' },
    { KeyPath: 'mfa.enabled', Condition: 'Equals', Value: false },
  ]
  const lists: Array<[string, unknown, Record<string, boolean>]> = [
    [
      'two matching',
      [
        { role: 'admin', mfa: { enabled: false } },
        { role: 'admin', mfa: { enabled: false } },
      ],
      { AnyElement: true, AllElements: true, OnlyOneElement: false, NoElement: false },
    ],
    [
      'one of two',
      [
        { role: 'admin', mfa: { enabled: false } },
        { role: 'admin', mfa: { enabled: true } },
      ],
      { AnyElement: true, AllElements: false, OnlyOneElement: true, NoElement: false },
    ],
    [
      'none matching',
      [{ role: 'user' }, { mfa: { enabled: false } }],
      { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true },
    ],
    ['empty list', [], { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true }],
    [
      'scalars and nulls as elements',
      [null, 'admin', 3],
      { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true },
    ],
    [
      'not a list (object)',
      { role: 'admin', mfa: { enabled: false } },
      { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true },
    ],
    ['not a list (string)', 'admin', { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true }],
    ['null', null, { AnyElement: false, AllElements: false, OnlyOneElement: false, NoElement: true }],
  ]
  for (const [name, list, want] of lists) {
    for (const [op, expected] of Object.entries(want)) {
      t.equal(
        holds({ KeyPath: 'users', Condition: op, Expressions: admin }, { users: list }),
        expected,
        `${op} on ${name}`,
      )
    }
  }
  for (const op of ['AnyElement', 'AllElements', 'OnlyOneElement', 'NoElement']) {
    t.equal(
      holds({ Key: 'users', Condition: op, Expressions: admin }, {}),
      op === 'NoElement',
      `${op} on a missing field`,
    )
  }
})

t.test('list comprehensions nest, and work on a [*] projection', async (t) => {
  const expr = {
    KeyPath: 'groups',
    Condition: 'AnyElement',
    Expressions: [
      { Key: 'members', Condition: 'AllElements', Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }] },
    ],
  }
  t.equal(
    holds(expr, { groups: [{ members: [{ active: false }] }, { members: [{ active: true }, { active: true }] }] }),
    true,
  )
  t.equal(holds(expr, { groups: [{ members: [{ active: false }] }, { members: [] }] }), false)
  const projected = {
    KeyPath: 'groups[*].members[*]',
    Condition: 'OnlyOneElement',
    Expressions: [{ Key: 'active', Condition: 'Equals', Value: true }],
  }
  t.equal(holds(projected, { groups: [{ members: [{ active: false }] }, { members: [{ active: true }] }] }), true)
})

t.test('multi-key compares two fields of the event', async (t) => {
  const eq = (c: string, extra: Record<string, unknown> = {}) => ({
    Condition: c,
    Values: [{ Key: 'left' }, { KeyPath: 'r.v' }],
    ...extra,
  })
  const rows: Array<[string, Record<string, unknown>, boolean]> = [
    ['Equals', { left: 'x', r: { v: 'x' } }, true],
    ['Equals', { left: 'x', r: { v: 'y' } }, false],
    ['Equals', { left: 1, r: { v: '1' } }, false],
    ['Equals', { left: 'x' }, false],
    ['Equals', { r: { v: 'x' } }, false],
    ['Equals', { left: null, r: { v: null } }, false],
    ['DoesNotEqual', { left: 'x', r: { v: 'y' } }, true],
    ['DoesNotEqual', { left: 'x', r: { v: 'x' } }, false],
    ['DoesNotEqual', { left: 'x' }, true],
    ['IEquals', { left: 'ABC', r: { v: 'abc' } }, true],
    ['IsGreaterThan', { left: 5, r: { v: 4 } }, true],
    ['IsGreaterThan', { left: 5, r: { v: '4' } }, false],
    ['IsLessThanOrEqual', { left: 4, r: { v: 4 } }, true],
    ['Contains', { left: ['a', 'b'], r: { v: 'b' } }, true],
    ['StartsWith', { left: 'abc', r: { v: 'ab' } }, true],
    ['StartsWith', { left: 'abc', r: { v: 1 } }, false],
    ['DoesNotStartWith', { left: 'abc', r: { v: 1 } }, true],
    ['IsIn', { left: 'b', r: { v: ['a', 'b'] } }, true],
    ['IsIn', { left: 'b', r: { v: 'b' } }, true],
    ['IsIn', { left: 'c', r: { v: ['a', 'b'] } }, false],
    ['IsNotIn', { left: 'c', r: { v: ['a', 'b'] } }, true],
    ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: '10.0.0.0/8' } }, true],
    ['IsIPAddressInCIDR', { left: '10.1.1.1', r: { v: 'not a cidr' } }, false],
  ]
  for (const [c, ev, expected] of rows) t.equal(holds(eq(c), ev), expected, `${c} ${JSON.stringify(ev)}`)
})

t.test('inline filters: a leaf on a missing field passes whatever the condition', async (t) => {
  const conditions: Array<Record<string, unknown>> = [
    { Condition: 'Equals', Value: 'x' },
    { Condition: 'DoesNotEqual', Value: 'x' },
    { Condition: 'IsIn', Values: ['x'] },
    { Condition: 'IsNotIn', Values: ['x'] },
    { Condition: 'Exists' },
    { Condition: 'DoesNotExist' },
    { Condition: 'IsNotNull' },
    { Condition: 'IsNotNullOrEmpty' },
    { Condition: 'IsGreaterThan', Value: 3 },
    { Condition: 'IsIPAddressPrivate' },
  ]
  for (const c of conditions) {
    const rule = compileOrThrow({ Detection: [yes], InlineFilters: [{ KeyPath: 'f.g', ...c }] })
    t.equal(rule.filtersPass({}), true, `${JSON.stringify(c)} on a missing field`)
    t.equal(rule.matches({ f: 'not an object' }), true, `${JSON.stringify(c)} on a path through a string`)
    const viaEnrichment = compileOrThrow({
      Detection: [yes],
      InlineFilters: [{ Enrichment: { Table: 't', Selector: 's', FieldPath: 'f' }, ...c }],
    })
    t.equal(viaEnrichment.filtersPass({}), true, `${JSON.stringify(c)} on missing enrichment`)
  }
})

t.test('inline filters: a null field makes positive comparisons false and negated ones true', async (t) => {
  const rows: Array<[Record<string, unknown>, boolean]> = [
    [{ Condition: 'Equals', Value: 'x' }, false],
    [{ Condition: 'DoesNotEqual', Value: 'x' }, true],
    [{ Condition: 'Contains', Value: 'x' }, false],
    [{ Condition: 'DoesNotContain', Value: 'x' }, true],
    [{ Condition: 'IsIn', Values: ['x'] }, false],
    [{ Condition: 'IsNotIn', Values: ['x'] }, true],
    [{ Condition: 'IsGreaterThan', Value: 1 }, false],
    [{ Condition: 'StartsWith', Value: 'x' }, false],
    [{ Condition: 'DoesNotEndWith', Value: 'x' }, true],
    [{ Condition: 'IsIPAddress' }, false],
    [{ Condition: 'IsIPAddressNotInCIDR', Value: '10.0.0.0/8' }, true],
    // Existence and null tests keep their meaning on a present null (docs/detections-simple.md).
    [{ Condition: 'IsNull' }, true],
    [{ Condition: 'IsNotNull' }, false],
    [{ Condition: 'Exists' }, true],
    [{ Condition: 'DoesNotExist' }, false],
    [{ Condition: 'IsNullOrEmpty' }, true],
    [{ Condition: 'IsNotNullOrEmpty' }, false],
  ]
  for (const [c, expected] of rows) {
    const rule = compileOrThrow({ Detection: [yes], InlineFilters: [{ KeyPath: 'f', ...c }] })
    t.equal(rule.matches({ f: null }), expected, JSON.stringify(c))
  }
})

t.test('inline filters with values, combinators, and their effect on the outcome', async (t) => {
  const rule = compileOrThrow({
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
  })
  const rows: Array<[Record<string, unknown>, boolean, boolean]> = [
    [{ action: 'delete', env: 'prod', user: { type: 'human' } }, true, true],
    [{ action: 'delete', env: 'dev', user: { type: 'human' } }, false, false],
    [{ action: 'delete' }, true, true],
    [{ action: 'delete', env: 'prod', user: { type: 'robot', name: 'bob' } }, false, false],
    [{ action: 'delete', env: 'prod', user: { type: 'robot', name: 'svc-x' } }, true, true],
    [{ action: 'read', env: 'prod' }, true, false],
  ]
  for (const [ev, filters, outcome] of rows) {
    t.equal(rule.filtersPass(ev), filters, `filters ${JSON.stringify(ev)}`)
    t.equal(rule.matches(ev), outcome, `outcome ${JSON.stringify(ev)}`)
  }
  const emptyAny = compileOrThrow({ Detection: [yes], InlineFilters: [{ Any: [] }] })
  t.equal(emptyAny.matches({}), false, 'Any: [] fails the filters')
})

t.test('the same leaf outside inline filters is false on a missing field', async (t) => {
  t.equal(holds({ KeyPath: 'f', Condition: 'Equals', Value: 'x' }, {}), false)
  t.equal(holds({ KeyPath: 'f', Condition: 'Exists' }, {}), false)
})
