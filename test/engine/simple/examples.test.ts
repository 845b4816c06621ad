// The example rules of the shared repository run through the engine: every test passes as
// written, and flipping any test's ExpectedResult makes exactly that test fail.
import t from 'tap'
import { simpleEngine } from '../../../src/engine/simple/index.js'
import { exampleRules, NO_NEIGHBOURS, ruleFile } from './helpers.js'

const examples = exampleRules()

t.test('there are example rules to run', async (t) => {
  t.ok(examples.length >= 3)
})

for (const { file, data } of examples) {
  t.test(`${file}: validates and every test passes`, async (t) => {
    const rule = ruleFile(data)
    const { errors } = simpleEngine.check(rule, NO_NEIGHBOURS)
    t.same(errors, [])
    const outcomes = await simpleEngine.runTests(rule, NO_NEIGHBOURS)
    t.equal(outcomes.length, (data.Tests as unknown[]).length)
    for (const o of outcomes) {
      t.equal(o.passed, true, `${o.name}: ${o.error}`)
      t.equal(o.actual, o.expected, o.name)
      t.equal(o.error, null, o.name)
      t.equal(o.errored, false, o.name)
    }
  })

  t.test(`${file}: flipping each ExpectedResult makes that test fail`, async (t) => {
    const tests = data.Tests as Array<Record<string, unknown>>
    for (let i = 0; i < tests.length; i++) {
      const flipped = tests.map((x, j) => (j === i ? { ...x, ExpectedResult: !x.ExpectedResult } : x))
      const outcomes = await simpleEngine.runTests(ruleFile({ ...data, Tests: flipped }), NO_NEIGHBOURS)
      t.same(
        outcomes.map((o) => o.passed),
        tests.map((_, j) => j !== i),
        `flipped ${String(tests[i]!.Name)}`,
      )
      t.type(outcomes[i]!.error, 'string')
    }
  })
}

t.test('the privacy-mode example renders its alert fields', async (t) => {
  const ex = examples.find((e) => e.file === 'editor_privacy_mode_disabled.yml')!
  const [first] = await simpleEngine.runTests(ruleFile(ex.data), NO_NEIGHBOURS)
  t.same(first!.functions, {
    detection: { output: true, error: null },
    title: { output: 'Privacy-mode enforcement disabled by [dana@example.com] for team [4821]', error: null },
    dedup: { output: '["4821"]', error: null },
    alertContext: { output: { actor: 'dana@example.com', old_value: 'true' }, error: null },
    severity: { output: 'HIGH', error: null },
    description: { output: ex.data.Description, error: null },
    reference: { output: null, error: null },
    runbook: { output: ex.data.Runbook, error: null },
    destinations: { output: null, error: null },
  })
})
