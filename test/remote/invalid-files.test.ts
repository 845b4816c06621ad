// With a remote: a merged revision with broken YAML, an invalid detection and a duplicated RuleID is
// applied, each bad file reported in /status with path, line and column, while the other rules and
// the last good version of the broken ones keep being served; a fixing revision clears the report.
// Real port: a remote (the git server).
import t from 'tap'
import { condition, pushHook, remoteWorld, simplePath, simpleRuleYaml, waitApplied } from './remote-fixture.js'

const frank = { name: 'Frank Reviewer', email: 'frank@example.com' }

interface Reported {
  path: string
  ruleId: string | null
  errors: Array<{ message: string; line: number | null; column: number | null }>
}

t.test(
  'broken YAML, an invalid detection and a duplicate id are each reported with their position; the last good versions keep serving',
  async (t) => {
    t.setTimeout(120_000)
    const w = await remoteWorld(t)
    const s = await w.startServer()
    const c = await w.clone(frank)

    // A good revision first.
    const ids = ['Bad.Yaml', 'Bad.Detection', 'Dup.Target', 'Good.Other']
    for (const id of ids) c.write(simplePath(id), simpleRuleYaml(id, `good ${id}`))
    const good = await c.commitAll('Add four rules')
    t.ok((await c.push()).ok)
    t.equal((await pushHook(s, good)).status, 202)
    const st0 = await waitApplied(s, good)
    t.same(st0.invalidFiles, [])

    // One merge breaks three of them in three ways, and changes the fourth.
    c.write(
      simplePath('Bad.Yaml'),
      simpleRuleYaml('Bad.Yaml', 'broken').replace('Severity: Low', 'Severity: Low: High'),
    ) // line 6, column 11
    c.write(simplePath('Bad.Detection'), simpleRuleYaml('Bad.Detection', 'invalid detection', 'NoSuchCondition')) // line 10
    const copyPath = 'simple_rules/zz_copies/dup_copy.yml'
    c.write(copyPath, simpleRuleYaml('Dup.Target', 'the copy')) // RuleID on line 2
    c.write(simplePath('Good.Other'), simpleRuleYaml('Good.Other', 'changed in the same merge'))
    const bad = await c.commitAll('Merge pull request #9: several mistakes')
    t.ok((await c.push()).ok)
    t.equal((await pushHook(s, bad)).status, 202)
    const st = await waitApplied(s, bad)
    t.equal(st.lastAttemptedRevision, bad, 'the revision itself is applied')
    t.equal(condition(st, 'Stalled')?.status, 'False', 'invalid files do not stall the reconciler')

    const invalid = st.invalidFiles as Reported[]
    const byPath = new Map(invalid.map((f) => [f.path, f]))
    t.same(
      [...byPath.keys()].sort(),
      [simplePath('Bad.Detection'), simplePath('Bad.Yaml'), simplePath('Dup.Target'), copyPath].sort(),
      'every bad file (both duplicates) is reported, nothing else',
    )

    const yamlErr = byPath.get(simplePath('Bad.Yaml'))
    t.equal(yamlErr?.ruleId, 'Bad.Yaml')
    t.ok(yamlErr && yamlErr.errors.length >= 1)
    t.match(
      yamlErr?.errors[0],
      { message: String, line: 6, column: 11 },
      'the YAML error points at the broken line and column',
    )

    const detErr = byPath.get(simplePath('Bad.Detection'))
    t.equal(detErr?.ruleId, 'Bad.Detection')
    t.match(detErr?.errors[0]?.message, /NoSuchCondition/)
    t.equal(detErr?.errors[0]?.line, 10, 'the detection error points at the Condition line')
    t.ok(
      [5, 16].includes(detErr?.errors[0]?.column as number),
      `at the Condition key or its value (column ${detErr?.errors[0]?.column})`,
    )

    for (const p of [simplePath('Dup.Target'), copyPath]) {
      const dup = byPath.get(p)
      t.equal(dup?.ruleId, 'Dup.Target', `${p}: the duplicated id`)
      t.match(dup?.errors[0]?.message, /Dup\.Target/)
      t.equal(dup?.errors[0]?.line, 2, `${p}: points at the RuleID line`)
      t.ok(
        [1, 9].includes(dup?.errors[0]?.column as number),
        `${p}: at the RuleID key or its value (column ${dup?.errors[0]?.column})`,
      )
    }

    // Served: the last good versions of the broken ones, the older file of the duplicate, the new Good.Other.
    const get = async (id: string) => (await s.request('GET', `/simple-rules/${id}`)).body?.description
    t.equal(await get('Bad.Yaml'), 'good Bad.Yaml')
    t.equal(await get('Bad.Detection'), 'good Bad.Detection')
    t.equal(await get('Dup.Target'), 'good Dup.Target', 'the older path keeps serving')
    t.equal(await get('Good.Other'), 'changed in the same merge')
    t.equal(await get('Editor.Audit.LoginFailed'), 'A signal for correlation rules; it raises no alert on its own.')
    const list = await s.request('GET', '/simple-rules?limit=1000')
    t.equal(
      list.body.results.filter((r: { id: string }) => r.id === 'Dup.Target').length,
      1,
      'a duplicated id is listed once',
    )

    // The fix clears the report and serves the fixed versions.
    c.write(simplePath('Bad.Yaml'), simpleRuleYaml('Bad.Yaml', 'fixed yaml'))
    c.write(simplePath('Bad.Detection'), simpleRuleYaml('Bad.Detection', 'fixed detection'))
    c.remove(copyPath)
    const fixed = await c.commitAll('Fix the mistakes')
    t.ok((await c.push()).ok)
    t.equal((await pushHook(s, fixed)).status, 202)
    const st2 = await waitApplied(s, fixed)
    t.same(st2.invalidFiles, [], 'no invalid file left')
    t.equal(condition(st2, 'Ready')?.status, 'True')
    t.equal(await get('Bad.Yaml'), 'fixed yaml')
    t.equal(await get('Bad.Detection'), 'fixed detection')
    t.equal(await get('Dup.Target'), 'good Dup.Target')
  },
)
