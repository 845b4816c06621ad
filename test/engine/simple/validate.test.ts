// Validation of the detection language: malformed files give located problems (path in the file
// form + a message naming the fault), all of them at once; hostile input (deep nesting, 10 MB
// strings, huge lists) ends in problems quickly, never a crash or a hang.
import t from 'tap'
import { parseYaml } from './helpers.js'
import {
  ACCEPTED_CONDITION_NAMES,
  compileRule,
  DEFAULT_LIMITS,
  parseRuleTree,
} from '../../../src/engine/simple/index.js'
import type { RuleProblem } from '../../../src/rules/model.js'

const ok = [{ Key: 'a', Condition: 'Exists' }]
const check = (data: Record<string, unknown>) => compileRule({ RuleID: 'R', Severity: 'LOW', ...data })

/** [what, file fields, expected problems as [path, message pattern]] */
const CASES: Array<[string, Record<string, unknown>, Array<[Array<string | number>, RegExp]>]> = [
  ['Detection missing', {}, [[['Detection'], /Detection is required/]]],
  ['Detection null', { Detection: null }, [[['Detection'], /Detection is required/]]],
  [
    'Detection not a list',
    { Detection: { Key: 'a', Condition: 'Exists' } },
    [[['Detection'], /must be a list of match expressions, not a map/]],
  ],
  ['Detection empty', { Detection: [] }, [[['Detection'], /empty/]]],
  ['an item that is a string', { Detection: ['Key: a'] }, [[['Detection', 0], /must be a map, not a string/]]],
  [
    'an unknown key with a case hint',
    { Detection: [{ key: 'a', Condition: 'Exists' }] },
    [[['Detection', 0, 'key'], /unknown key 'key' \(did you mean 'Key'\?\)/]],
  ],
  [
    'an extra key',
    { Detection: [{ Key: 'a', Condition: 'Exists', Note: 'x' }] },
    [[['Detection', 0, 'Note'], /unknown key 'Note'/]],
  ],
  ['no Condition', { Detection: [{ Key: 'a', Value: 1 }] }, [[['Detection', 0], /needs a Condition/]]],
  [
    'Condition not a string',
    { Detection: [{ Key: 'a', Condition: 5 }] },
    [[['Detection', 0, 'Condition'], /must be a condition name, not a number/]],
  ],
  [
    'an unknown condition lists the valid ones',
    { Detection: [{ Key: 'a', Condition: 'Matches', Value: 'x' }] },
    [
      [
        ['Detection', 0, 'Condition'],
        /unknown condition 'Matches'; valid conditions: .*AllElements.*Equals.*IsIPAddressInCIDR.*NoElement/,
      ],
    ],
  ],
  [
    'a condition in the wrong case',
    { Detection: [{ Key: 'a', Condition: 'equals', Value: 'x' }] },
    [[['Detection', 0, 'Condition'], /did you mean 'Equals'/]],
  ],
  [
    'Value and Values mixed',
    { Detection: [{ Key: 'a', Condition: 'Equals', Value: 'x', Values: ['x'] }] },
    [[['Detection', 0], /mixes Value and Values/]],
  ],
  [
    'two key specifiers',
    { Detection: [{ Key: 'a', KeyPath: 'a', Condition: 'Exists' }] },
    [[['Detection', 0], /mixes 2 key specifiers \(Key, KeyPath\)/]],
  ],
  [
    'a combinator mixed with a condition',
    { Detection: [{ All: ok, Condition: 'Exists', Key: 'a' }] },
    [
      [['Detection', 0, 'Key'], /cannot be mixed/],
      [['Detection', 0, 'Condition'], /cannot be mixed/],
    ],
  ],
  ['two combinators', { Detection: [{ All: ok, Any: ok }] }, [[['Detection', 0], /has All and Any/]]],
  [
    'a combinator that is not a list',
    { Detection: [{ Any: { Key: 'a', Condition: 'Exists' } }] },
    [[['Detection', 0, 'Any'], /must be a list/]],
  ],
  ['Value missing', { Detection: [{ Key: 'a', Condition: 'Equals' }] }, [[['Detection', 0], /Equals needs a Value/]]],
  [
    'Value null',
    { Detection: [{ Key: 'a', Condition: 'Equals', Value: null }] },
    [[['Detection', 0, 'Value'], /Value is null; to test for null use IsNull/]],
  ],
  [
    'Value a list',
    { Detection: [{ Key: 'a', Condition: 'Equals', Value: ['x'] }] },
    [[['Detection', 0, 'Value'], /not a list \(use IsIn/]],
  ],
  [
    'Value a map',
    { Detection: [{ Key: 'a', Condition: 'Contains', Value: { x: 1 } }] },
    [[['Detection', 0, 'Value'], /not a map/]],
  ],
  [
    'StartsWith a number',
    { Detection: [{ Key: 'a', Condition: 'StartsWith', Value: 10 }] },
    [[['Detection', 0, 'Value'], /StartsWith needs a string, not 10/]],
  ],
  [
    'IsGreaterThan a string',
    { Detection: [{ Key: 'a', Condition: 'IsGreaterThan', Value: '10' }] },
    [[['Detection', 0, 'Value'], /IsGreaterThan needs a number, not '10'/]],
  ],
  [
    'a bad CIDR',
    { Detection: [{ Key: 'a', Condition: 'IsIPAddressInCIDR', Value: '10.0.0.0/33' }] },
    [[['Detection', 0, 'Value'], /needs a CIDR/]],
  ],
  [
    'IsIn with Value',
    { Detection: [{ Key: 'a', Condition: 'IsIn', Value: 'x' }] },
    [[['Detection', 0, 'Value'], /IsIn takes Values/]],
  ],
  [
    'IsIn without Values',
    { Detection: [{ Key: 'a', Condition: 'IsNotIn' }] },
    [[['Detection', 0], /IsNotIn needs Values/]],
  ],
  [
    'Values not a list',
    { Detection: [{ Key: 'a', Condition: 'IsIn', Values: 'x' }] },
    [[['Detection', 0, 'Values'], /must be a list of scalars, not a string/]],
  ],
  [
    'Values of mixed types',
    { Detection: [{ Key: 'a', Condition: 'IsIn', Values: ['1', 2] }] },
    [[['Detection', 0, 'Values'], /mixes string and number/]],
  ],
  [
    'Values with a null',
    { Detection: [{ Key: 'a', Condition: 'IsIn', Values: ['a', null] }] },
    [[['Detection', 0, 'Values', 1], /not null/]],
  ],
  [
    'Equals with Values',
    { Detection: [{ Key: 'a', Condition: 'Equals', Values: ['x'] }] },
    [[['Detection', 0, 'Values'], /Equals takes one Value, not Values \(use IsIn/]],
  ],
  [
    'Expressions on a comparison',
    { Detection: [{ Key: 'a', Condition: 'Equals', Value: 'x', Expressions: ok }] },
    [[['Detection', 0, 'Expressions'], /only used by list comprehensions/]],
  ],
  [
    'a key-less Values of scalars',
    { Detection: [{ Condition: 'IsIn', Values: ['a'] }] },
    [[['Detection', 0], /IsIn needs a key specifier/]],
  ],
  [
    'multi-key with three operands',
    { Detection: [{ Condition: 'Equals', Values: [{ Key: 'a' }, { Key: 'b' }, { Key: 'c' }] }] },
    [[['Detection', 0, 'Values'], /exactly two key specifiers, not 3/]],
  ],
  [
    'multi-key with a bad operand',
    { Detection: [{ Condition: 'Equals', Values: [{ Key: 'a' }, { Key: 'b', KeyPath: 'c' }] }] },
    [[['Detection', 0, 'Values', 1], /2 key specifiers/]],
  ],
  [
    'multi-key operand with an extra key',
    { Detection: [{ Condition: 'Equals', Values: [{ Key: 'a', Value: 1 }, { Key: 'b' }] }] },
    [[['Detection', 0, 'Values', 0, 'Value'], /unknown key 'Value'/]],
  ],
  [
    'a comprehension without Expressions',
    { Detection: [{ Key: 'a', Condition: 'AnyElement' }] },
    [[['Detection', 0], /AnyElement needs Expressions/]],
  ],
  [
    'a comprehension with Value',
    { Detection: [{ Key: 'a', Condition: 'NoElement', Value: 1, Expressions: ok }] },
    [[['Detection', 0, 'Value'], /not allowed with NoElement/]],
  ],
  [
    'a comprehension without a key',
    { Detection: [{ Condition: 'AllElements', Expressions: ok }] },
    [[['Detection', 0], /AllElements needs a key specifier/]],
  ],
  [
    'problems inside Expressions of an unknown condition',
    { Detection: [{ Key: 'a', Condition: 'AnyElemnt', Expressions: [{ Key: 'b', Condition: 'Equals' }] }] },
    [
      [['Detection', 0, 'Condition'], /unknown condition 'AnyElemnt'/],
      [['Detection', 0, 'Expressions', 0], /Equals needs a Value/],
    ],
  ],
  [
    'a problem inside Expressions',
    { Detection: [{ Key: 'a', Condition: 'AnyElement', Expressions: [{ Key: 'b', Condition: 'Nope' }] }] },
    [[['Detection', 0, 'Expressions', 0, 'Condition'], /unknown condition 'Nope'/]],
  ],
  [
    'AlwaysTrue with a key',
    { Detection: [{ Key: 'a', Condition: 'AlwaysTrue' }] },
    [[['Detection', 0, 'Key'], /not allowed with AlwaysTrue/]],
  ],
  [
    'AlwaysFalse with a Value',
    { Detection: [{ Condition: 'AlwaysFalse', Value: 1 }] },
    [[['Detection', 0, 'Value'], /not allowed with AlwaysFalse/]],
  ],
  [
    'Key not a string',
    { Detection: [{ Key: 5, Condition: 'Exists' }] },
    [[['Detection', 0, 'Key'], /Key must be a non-empty string, not a number \(quote it\)/]],
  ],
  ['Key empty', { Detection: [{ Key: '', Condition: 'Exists' }] }, [[['Detection', 0, 'Key'], /non-empty string/]]],
  [
    'DeepKey with a negative index',
    { Detection: [{ DeepKey: ['a', -1], Condition: 'Exists' }] },
    [[['Detection', 0, 'DeepKey', 1], /integer ≥ 0/]],
  ],
  [
    'DeepKey empty',
    { Detection: [{ DeepKey: [], Condition: 'Exists' }] },
    [[['Detection', 0, 'DeepKey'], /non-empty list/]],
  ],
  [
    'KeyPath with a syntax error',
    { Detection: [{ KeyPath: 'a..b', Condition: 'Exists' }] },
    [[['Detection', 0, 'KeyPath'], /KeyPath 'a\.\.b' has an empty segment at character 3/]],
  ],
  [
    'KeyPath not a string',
    { Detection: [{ KeyPath: ['a'], Condition: 'Exists' }] },
    [[['Detection', 0, 'KeyPath'], /must be a string/]],
  ],
  [
    'Enrichment incomplete',
    { Detection: [{ Enrichment: { Table: 't', FieldPath: 'x[' }, Condition: 'Exists' }] },
    [[['Detection', 0, 'Enrichment'], /needs Selector/]],
  ],
  [
    'Enrichment with a bad FieldPath and an unknown key',
    { Detection: [{ Enrichment: { Table: 't', Selector: 's', FieldPath: 'x[', Field: 1 }, Condition: 'Exists' }] },
    [[['Detection', 0, 'Enrichment', 'Field'], /unknown key 'Field'/]],
  ],
  [
    'Enrichment FieldPath syntax',
    { Detection: [{ Enrichment: { Table: 't', Selector: 's', FieldPath: 'x[' }, Condition: 'Exists' }] },
    [[['Detection', 0, 'Enrichment', 'FieldPath'], /unclosed/]],
  ],
  ['InlineFilters not a list', { Detection: ok, InlineFilters: 'x' }, [[['InlineFilters'], /must be a list/]]],
  [
    'InlineFilters with Key',
    { Detection: ok, InlineFilters: [{ Key: 'a', Condition: 'Exists' }] },
    [[['InlineFilters', 0, 'Key'], /KeyPath/]],
  ],
  [
    'InlineFilters with DeepKey',
    { Detection: ok, InlineFilters: [{ DeepKey: ['a'], Condition: 'Exists' }] },
    [[['InlineFilters', 0, 'DeepKey'], /KeyPath/]],
  ],
  [
    'InlineFilters with OnlyOne and None',
    { Detection: ok, InlineFilters: [{ OnlyOne: [] }, { None: [] }] },
    [
      [['InlineFilters', 0, 'OnlyOne'], /only All and Any/],
      [['InlineFilters', 1, 'None'], /only All and Any/],
    ],
  ],
  [
    'InlineFilters with a comprehension',
    { Detection: ok, InlineFilters: [{ KeyPath: 'a', Condition: 'AnyElement', Expressions: ok }] },
    [[['InlineFilters', 0, 'Condition'], /not allowed in InlineFilters/]],
  ],
  [
    'InlineFilters with multi-key',
    { Detection: ok, InlineFilters: [{ Condition: 'Equals', Values: [{ KeyPath: 'a' }, { KeyPath: 'b' }] }] },
    [[['InlineFilters', 0, 'Values'], /multi-key comparisons are not allowed in InlineFilters/]],
  ],
  [
    'InlineFilters with AlwaysTrue',
    { Detection: ok, InlineFilters: [{ Condition: 'AlwaysTrue' }] },
    [[['InlineFilters', 0, 'Condition'], /not allowed in InlineFilters/]],
  ],
  [
    'InlineFilters nested Key inside Any',
    { Detection: ok, InlineFilters: [{ Any: [{ Key: 'a', Condition: 'Exists' }] }] },
    [[['InlineFilters', 0, 'Any', 0, 'Key'], /KeyPath/]],
  ],
  ['AlertTitle not a string', { Detection: ok, AlertTitle: ['x'] }, [[['AlertTitle'], /must be a string/]]],
  [
    'AlertTitle with a bad placeholder',
    { Detection: ok, AlertTitle: 'user {a..b} did {x[}' },
    [
      [['AlertTitle'], /placeholder \{a\.\.b\} at character 6: KeyPath has an empty segment/],
      [['AlertTitle'], /placeholder \{x\[\} at character 17: KeyPath has an unclosed/],
    ],
  ],
  ['AlertContext not a list', { Detection: ok, AlertContext: { actor: 'a' } }, [[['AlertContext'], /must be a list/]]],
  [
    'AlertContext item problems',
    {
      Detection: ok,
      AlertContext: [
        { KeyName: 'a', KeyValue: { Key: 'x' }, Extra: 1 },
        { KeyValue: { Key: 'y' } },
        { KeyName: 'b' },
        { KeyName: 'c', KeyValue: 'user' },
      ],
    },
    [
      [['AlertContext', 0, 'Extra'], /unknown key 'Extra'/],
      [['AlertContext', 1], /needs KeyName/],
      [['AlertContext', 2], /needs KeyValue/],
      [['AlertContext', 3, 'KeyValue'], /must be a key specifier/],
    ],
  ],
  [
    'AlertContext duplicate KeyName',
    {
      Detection: ok,
      AlertContext: [
        { KeyName: 'a', KeyValue: { Key: 'x' } },
        { KeyName: 'a', KeyValue: { Key: 'y' } },
      ],
    },
    [[['AlertContext', 1, 'KeyName'], /appears twice/]],
  ],
  [
    'DynamicSeverities bad ChangeTo',
    { Detection: ok, DynamicSeverities: [{ ChangeTo: 'URGENT', Conditions: ok }] },
    [[['DynamicSeverities', 0, 'ChangeTo'], /must be one of INFO, LOW, MEDIUM, HIGH, CRITICAL, not 'URGENT'/]],
  ],
  [
    'DynamicSeverities missing parts',
    { Detection: ok, DynamicSeverities: [{ Conditions: ok }, { ChangeTo: 'HIGH' }] },
    [
      [['DynamicSeverities', 0], /needs ChangeTo/],
      [['DynamicSeverities', 1], /needs Conditions/],
    ],
  ],
  [
    'DynamicSeverities bad condition',
    { Detection: ok, DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [{ Key: 'a', Condition: 'Equals' }] }] },
    [[['DynamicSeverities', 0, 'Conditions', 0], /Equals needs a Value/]],
  ],
  ['GroupBy not a list', { Detection: ok, GroupBy: 'user' }, [[['GroupBy'], /must be a list of key specifiers/]]],
  [
    'GroupBy bad item',
    { Detection: ok, GroupBy: [{ Key: 'a' }, 'b', {}] },
    [
      [['GroupBy', 1], /must be a key specifier/],
      [['GroupBy', 2], /needs one of Key/],
    ],
  ],
]

t.test('malformed detections give located problems', async (t) => {
  for (const [what, data, expected] of CASES) {
    const { errors, rule } = check(data)
    t.equal(rule, null, `${what}: no compiled rule`)
    const shown = JSON.stringify(errors)
    t.equal(errors.length, expected.length, `${what}: ${expected.length} problem(s), got ${shown}`)
    for (const [path, re] of expected) {
      const hit = errors.find((e: RuleProblem) => JSON.stringify(e.path) === JSON.stringify(path) && re.test(e.message))
      t.ok(hit, `${what}: ${JSON.stringify(path)} ${re} in ${shown}`)
    }
  }
})

t.test('every problem of a file is reported at once', async (t) => {
  const { errors } = check({
    Detection: [
      { Key: 'a', Condition: 'Nope' },
      { KeyPath: 'a..b', Condition: 'Exists' },
      { All: [{ Condition: 'Equals' }] },
    ],
    InlineFilters: [{ Key: 'x', Condition: 'Exists' }],
    AlertTitle: '{a..}',
    DynamicSeverities: [{ ChangeTo: 'NOPE', Conditions: ok }],
    GroupBy: ['x'],
  })
  const paths = errors.map((e) => JSON.stringify(e.path))
  t.same(paths, [
    '["Detection",0,"Condition"]',
    '["Detection",1,"KeyPath"]',
    '["Detection",2,"All",0]',
    '["Detection",2,"All",0]',
    '["InlineFilters",0,"Key"]',
    '["AlertTitle"]',
    '["DynamicSeverities",0,"ChangeTo"]',
    '["GroupBy",0]',
  ])
})

t.test('the valid-condition list in the message is the accepted vocabulary', async (t) => {
  const { errors } = check({ Detection: [{ Key: 'a', Condition: 'Regex', Value: '.*' }] })
  for (const name of ACCEPTED_CONDITION_NAMES) t.ok(errors[0]!.message.includes(name), name)
  t.equal(errors[0]!.code, 'UnknownCondition')
})

t.test('warnings: an ignored Value, an empty Values list, an empty GroupBy', async (t) => {
  const { errors, warnings, rule } = check({
    Detection: [
      { Key: 'a', Condition: 'Exists', Value: 'x' },
      { Key: 'b', Condition: 'IsIn', Values: [] },
    ],
    GroupBy: [],
  })
  t.same(errors, [])
  t.ok(rule)
  t.same(
    warnings.map((w) => w.path),
    [['Detection', 0, 'Value'], ['Detection', 1, 'Values'], ['GroupBy']],
  )
})

t.test('optional fields given as null count as absent', async (t) => {
  const { errors, rule } = check({
    Detection: ok,
    InlineFilters: null,
    AlertTitle: null,
    AlertContext: null,
    DynamicSeverities: null,
    GroupBy: null,
  })
  t.same(errors, [])
  t.ok(rule)
})

function nest(depth: number, wrap: (inner: unknown) => unknown): unknown {
  let e: unknown = { Key: 'a', Condition: 'Exists' }
  for (let i = 0; i < depth; i++) e = wrap(e)
  return e
}

t.test('1,000-deep nesting ends in one located problem, fast', async (t) => {
  const shapes: Array<[string, (inner: unknown) => unknown, string]> = [
    ['All', (inner) => ({ All: [inner] }), 'All'],
    ['Any', (inner) => ({ Any: [inner] }), 'Any'],
    ['AnyElement', (inner) => ({ Key: 'l', Condition: 'AnyElement', Expressions: [inner] }), 'Expressions'],
  ]
  for (const [name, wrap, key] of shapes) {
    const started = performance.now()
    const { errors } = check({ Detection: [nest(1000, wrap)] })
    const ms = performance.now() - started
    t.equal(errors.length, 1, `${name}: one problem`)
    t.equal(errors[0]!.code, 'NestingTooDeep')
    t.match(errors[0]!.message, /nested deeper than 64 levels/)
    const expectedPath: Array<string | number> = ['Detection']
    for (let i = 0; i < DEFAULT_LIMITS.maxDepth; i++) expectedPath.push(0, key)
    t.same(errors[0]!.path, expectedPath, `${name}: the path leads to the first level too deep`)
    // A hang guard, generous for loaded CI machines; speed is the benchmarks' business.
    t.ok(ms < 10_000, `${name}: ${ms.toFixed(1)} ms`)
  }
})

t.test('1,000-deep nesting written as YAML text ends in the same one problem', async (t) => {
  let flow = '{Key: a, Condition: Exists}'
  for (let i = 0; i < 1000; i++) flow = `{Any: [${flow}]}`
  const data = parseYaml(`RuleID: Deep\nSeverity: Low\nDetection:\n  - ${flow}\n`) as Record<string, unknown>
  const { errors } = compileRule(data)
  t.equal(errors.length, 1)
  t.equal(errors[0]!.code, 'NestingTooDeep')
})

t.test('nesting up to the bound is accepted and evaluates', async (t) => {
  const { rule, errors } = check({ Detection: [nest(DEFAULT_LIMITS.maxDepth - 1, (inner) => ({ All: [inner] }))] })
  t.same(errors, [])
  t.equal(rule!.matches({ a: 1 }), true)
  t.equal(rule!.matches({}), false)
  const deeper = parseRuleTree(
    { Detection: [nest(100, (inner) => ({ All: [inner] }))] },
    { ...DEFAULT_LIMITS, maxDepth: 128 },
  )
  t.same(deeper.errors, [], 'the bound is configurable')
})

t.test('10 MB strings give short located problems, fast', async (t) => {
  const huge = 'x'.repeat(10 * 1024 * 1024)
  const started = performance.now()
  const { errors } = check({
    Detection: [
      { Key: 'a', Condition: huge, Value: 'x' },
      { KeyPath: `${huge}..`, Condition: 'Exists' },
      { [huge]: 1, Key: 'a', Condition: 'Exists' },
      { Key: 'a', Condition: 'IsGreaterThan', Value: huge },
      { Key: 'a', Condition: 'IsIPAddressInCIDR', Value: huge },
    ],
    AlertTitle: `{${huge}[}`,
  })
  const ms = performance.now() - started
  t.equal(errors.length, 6)
  for (const e of errors)
    t.ok(e.message.length < 2000, `message of ${e.message.length} characters at ${JSON.stringify(e.path).slice(0, 60)}`)
  t.ok(ms < 20_000, `no hang: ${ms.toFixed(0)} ms`)
  const fine = check({ Detection: [{ Key: 'a', Condition: 'Equals', Value: huge }], AlertTitle: huge })
  t.same(fine.errors, [], 'a 10 MB operand and title are legal')
  t.equal(fine.rule!.matches({ a: huge }), true)
  t.equal(fine.rule!.title({}).length, 1000, 'the title is cut to 1,000 characters')
})

t.test('a file with a huge number of problems is answered with a bounded list', async (t) => {
  const detection = Array.from({ length: 100_000 }, () => ({ Key: 'a', Condition: 'Nope' }))
  const started = performance.now()
  const { errors } = check({ Detection: detection })
  t.equal(errors.length, DEFAULT_LIMITS.maxProblems + 1)
  t.match(errors.at(-1)!.message, /99800 more problems not listed/)
  t.ok(performance.now() - started < 30_000, 'no hang')
})

t.test('wrong shapes for the whole detection never throw', async (t) => {
  const values: unknown[] = [
    null,
    0,
    'x',
    true,
    [],
    {},
    [null],
    [[]],
    [{}],
    [{ All: null }],
    [{ Condition: null }],
    [{ Key: null, Condition: 'Exists' }],
    [{ Condition: 'Equals', Values: [null, null] }],
    [{ Condition: 'Equals', Values: [{}, {}] }],
    [{ Key: 'a', Condition: 'AnyElement', Expressions: null }],
    [{ Enrichment: null, Condition: 'Exists' }],
    [{ Enrichment: [], Condition: 'Exists' }],
  ]
  for (const v of values) {
    const { errors, rule } = check({
      Detection: v,
      InlineFilters: v,
      AlertContext: v,
      DynamicSeverities: v,
      GroupBy: v,
      AlertTitle: v,
    })
    t.ok(errors.length > 0 || rule !== null, JSON.stringify(v))
    if (v !== null) t.ok(errors.length > 0, `${JSON.stringify(v)} is rejected`)
  }
})
