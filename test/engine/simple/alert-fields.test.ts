// Alert fields: AlertTitle rendering (placeholders, literal braces, missing/null/list values, the
// 1,000-character cut, the DisplayName/RuleID fallback), AlertContext, DynamicSeverities and the
// GroupBy dedup key.
import t from 'tap'
import { compileRule, evaluateRule, parseTitleTemplate } from '../../../src/engine/simple/index.js'
import { compileOrThrow } from './helpers.js'

const yes = [{ Condition: 'AlwaysTrue' }]
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

t.test('AlertTitle renders placeholders in KeyPath syntax; everything else is literal', async (t) => {
  const rows: Array<[string, string]> = [
    ['plain text', 'plain text'],
    ['{user}', 'dana'],
    ['user {user} did it', 'user dana did it'],
    ['{ user }', 'dana'],
    ['{n}/{f}/{b}', '42/1.5/false'],
    ['[{missing}]', '[]'],
    ['[{nul}]', '[]'],
    ['{list}', '["a",1]'],
    ['{obj}', '{"k":"v","n":[1]}'],
    ['{obj.n[0]}', '1'],
    ['{users[*].name}', '["x","y"]'],
    ['{a.b}', ''],
    ['{}', '{}'],
    ['{ }', '{ }'],
    ['open { only', 'open { only'],
    ['{{user}}', '{dana}'],
    ['}{user}{', '}dana{'],
    ['json-ish {"a": 1}', 'json-ish '],
  ]
  for (const [template, expected] of rows) {
    const rule = compileOrThrow({ Detection: yes, AlertTitle: template })
    t.equal(rule.title(EVENT), expected, template)
  }
})

t.test('without AlertTitle the title is DisplayName, then RuleID', async (t) => {
  t.equal(compileOrThrow({ Detection: yes, DisplayName: 'Shown name' }).title(EVENT), 'Shown name')
  t.equal(compileOrThrow({ Detection: yes, RuleID: 'Some.Rule' }).title(EVENT), 'Some.Rule')
  t.equal(compileOrThrow({ Detection: yes, RuleID: 'Some.Rule', DisplayName: '' }).title(EVENT), 'Some.Rule')
})

t.test('titles are cut at 1,000 characters, never inside a surrogate pair', async (t) => {
  const long = compileOrThrow({ Detection: yes, AlertTitle: `${'x'.repeat(990)}{user}{user}` })
  t.equal(long.title(EVENT), `${'x'.repeat(990)}danadana`.slice(0, 998))
  const exact = compileOrThrow({ Detection: yes, AlertTitle: 'y'.repeat(1000) })
  t.equal(exact.title({}).length, 1000)
  const emoji = compileOrThrow({ Detection: yes, AlertTitle: '😀'.repeat(1200) })
  const title = emoji.title({})
  t.equal([...title].length, 1000)
  t.equal(title, '😀'.repeat(1000))
})

t.test('a placeholder that is not a KeyPath is a problem with its position', async (t) => {
  const r = parseTitleTemplate('ok {a} bad {b..c}', 256)
  t.equal(r.ok, false)
  if (!r.ok) t.match(r.messages[0]!, /\{b\.\.c\} at character 12/)
})

t.test('AlertContext maps KeyName to the resolved value, missing → null', async (t) => {
  const rule = compileOrThrow({
    Detection: yes,
    AlertContext: [
      { KeyName: 'actor', KeyValue: { Key: 'user' } },
      { KeyName: 'gone', KeyValue: { KeyPath: 'x.y' } },
      { KeyName: 'nothing', KeyValue: { Key: 'nul' } },
      { KeyName: 'names', KeyValue: { KeyPath: 'users[*].name' } },
      { KeyName: 'deep', KeyValue: { DeepKey: ['obj', 'n', 0] } },
      { KeyName: '__proto__', KeyValue: { Key: 'n' } },
    ],
  })
  const ctx = rule.alertContext(EVENT)
  t.same(Object.entries(ctx), [
    ['actor', 'dana'],
    ['gone', null],
    ['nothing', null],
    ['names', ['x', 'y']],
    ['deep', 1],
    ['__proto__', 42],
  ])
  t.equal(Object.getPrototypeOf(ctx), Object.prototype, 'a __proto__ KeyName stays data')
})

t.test('DynamicSeverities: the first entry whose conditions all hold, else Severity', async (t) => {
  const rule = compileOrThrow({
    Severity: 'Medium',
    Detection: yes,
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
  })
  t.equal(rule.severity({ n: 101, user: 'root' }), 'CRITICAL')
  t.equal(rule.severity({ n: 101, user: 'dana' }), 'HIGH')
  t.equal(rule.severity({ n: 11 }), 'INFO')
  t.equal(rule.severity({ n: 1 }), 'MEDIUM')
  t.equal(rule.severity({}), 'MEDIUM')
  const empty = compileOrThrow({
    Severity: 'LOW',
    Detection: yes,
    DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [] }],
  })
  t.equal(empty.severity({}), 'HIGH', 'an empty Conditions list holds')
})

t.test('GroupBy: the dedup key is the JSON array of the values; no GroupBy → the title', async (t) => {
  const rule = compileOrThrow({
    Detection: yes,
    GroupBy: [{ Key: 'user' }, { KeyPath: 'missing.x' }, { Key: 'n' }, { KeyPath: 'users[*].name' }, { Key: 'nul' }],
  })
  t.equal(rule.dedup(EVENT), '["dana",null,42,["x","y"],null]')
  const byTitle = compileOrThrow({ Detection: yes, AlertTitle: 'user {user}' })
  t.equal(byTitle.dedup(EVENT), 'user dana')
  const byName = compileOrThrow({ Detection: yes, DisplayName: 'Fallback' })
  t.equal(byName.dedup(EVENT), 'Fallback')
})

t.test('evaluateRule returns the alert fields only for a match', async (t) => {
  const { rule } = compileRule({
    RuleID: 'R',
    Severity: 'high',
    Detection: [{ Key: 'user', Condition: 'Equals', Value: 'dana' }],
    AlertTitle: 'by {user}',
    AlertContext: [{ KeyName: 'n', KeyValue: { Key: 'n' } }],
    GroupBy: [{ Key: 'user' }],
  })
  t.same(evaluateRule(rule!, EVENT), {
    matched: true,
    alert: { title: 'by dana', dedup: '["dana"]', alertContext: { n: 42 }, severity: 'HIGH' },
  })
  t.same(evaluateRule(rule!, { user: 'eli' }), { matched: false })
})
