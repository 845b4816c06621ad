// The engine's index-time module check (engine/python/module-check.ts): many modules in ONE sandboxed
// run, a verdict per module (ok, invalid with file/line/column, not-run, unchecked); a hanging module
// stops its run only, the rest resume in a fresh one; globals are served by GlobalID and a module
// does not see the previous one's imports. And detection still reports a module failing at import
// as one error for the batch (the path a module that imports at index time but not later takes).
import t from 'tap'
import type { ModuleUnit } from '../../../src/engine/engine.js'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { createMetricsRegistry } from '../../../src/metrics.js'
import { contextWith } from './fixtures.js'

const unit = (name: string, source: string, analysisType = 'rule'): ModuleUnit => ({
  key: `rules/${name}.yml`,
  analysisType,
  filename: `rules/${name}.py`,
  source,
})

const helper = {
  analysisType: 'global',
  path: 'global_helpers/shared.yml',
  data: { AnalysisType: 'global', GlobalID: 'shared', Filename: 'shared.py' },
  pythonSource: 'COUNT = [0]\n',
}

/** Runs of the pool by job type, from its duration histogram. */
async function runsOf(metrics: ReturnType<typeof createMetricsRegistry>, op: string): Promise<number> {
  const metric = await metrics.getSingleMetric('rulekeeper_python_run_duration_seconds')?.get()
  const values = (metric?.values ?? []) as Array<{
    metricName?: string
    labels: Record<string, unknown>
    value: number
  }>
  return values.find((v) => v.metricName?.endsWith('_count') && v.labels.op === op)?.value ?? 0
}

t.test('one run for many modules, a verdict each', async (t) => {
  const metrics = createMetricsRegistry(false)
  const python = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000, metrics })
  t.teardown(() => python.pool.close())
  const fine = Array.from({ length: 40 }, (_, i) =>
    unit(
      `fine${i}`,
      `import shared\n\nshared.COUNT[0] += 1\nassert shared.COUNT[0] == 1\n\n\ndef rule(event):\n    return True\n`,
    ),
  )
  const units = [
    ...fine,
    unit('syntax', 'def rule(event):\n    return [1,\n'),
    unit('indent', 'def rule(event):\nreturn True\n'),
    unit('name', 'x = y\n'),
    unit('missing', 'import policyuniverse\n'),
    unit('nothing', 'def title(event):\n    return ""\n'),
    unit('exits', 'raise SystemExit(3)\n'),
    unit('policy', 'def rule(event):\n    return True\n', 'policy'),
    unit('helper', 'VALUE = 1\n', 'global'),
  ]
  const verdicts = await python.checkModules(units, contextWith(helper as never))
  t.equal(await runsOf(metrics, 'modules'), 1, 'every module in one sandboxed run')
  t.ok(
    fine.every((u) => verdicts.get(u.key)?.status === 'ok'),
    'each module imports its globals afresh (module state does not leak from one to the next)',
  )
  t.match(verdicts.get('rules/syntax.yml'), {
    status: 'invalid',
    problem: { file: 'rules/syntax.py', line: 2, column: 12, message: /SyntaxError: '\[' was never closed/ },
  })
  t.match(verdicts.get('rules/indent.yml'), {
    status: 'invalid',
    problem: { line: 2, column: 1, message: /IndentationError/ },
  })
  t.match(verdicts.get('rules/name.yml'), { status: 'invalid', problem: { line: 1, message: /NameError/ } })
  t.match(verdicts.get('rules/missing.yml'), {
    status: 'not-run',
    module: 'policyuniverse',
    problem: { line: 1, message: /not run: module policyuniverse is not installed/ },
  })
  t.match(verdicts.get('rules/nothing.yml'), {
    status: 'invalid',
    problem: { message: 'defines no rule(event) function', code: 'PythonMissingRule' },
  })
  t.match(verdicts.get('rules/exits.yml'), { status: 'invalid', problem: { message: /SystemExit/ } })
  t.match(verdicts.get('rules/policy.yml'), {
    status: 'invalid',
    problem: { message: 'defines no policy(resource) function', code: 'PythonMissingRule' },
  })
  t.same(verdicts.get('rules/helper.yml'), { status: 'ok' }, 'a helper need define nothing')
})

t.test('a module that hangs is invalid with "timed out"; the next ones resume in a fresh run', async (t) => {
  const metrics = createMetricsRegistry(false)
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 800, metrics })
  t.teardown(() => python.pool.close())
  const units = [
    unit('before', 'def rule(event):\n    return True\n'),
    unit('loops', 'while True:\n    pass\n'),
    unit('after', 'def rule(event):\n    return True\n'),
  ]
  const verdicts = await python.checkModules(units, contextWith())
  t.same(verdicts.get('rules/before.yml'), { status: 'ok' })
  t.match(verdicts.get('rules/loops.yml'), { status: 'invalid', problem: { message: /^timed out after 800 ms/ } })
  t.same(verdicts.get('rules/after.yml'), { status: 'ok' })
  t.equal(await runsOf(metrics, 'modules'), 2, 'two runs: the one stopped, and the rest')
})

t.test('without a sandbox every module is unchecked, with the reason', async (t) => {
  const python = createPythonEngine({
    command: '/usr/bin/python3',
    poolSize: 1,
    timeoutMs: 5000,
    serverEnv: { PATH: '/nonexistent' },
  })
  t.teardown(() => python.pool.close())
  const verdicts = await python.checkModules([unit('x', 'def rule(event):\n    return (\n')], contextWith())
  t.match(verdicts.get('rules/x.yml'), { status: 'unchecked', reason: /^Python tests cannot run: bubblewrap/ })
})

t.test('detection: a module failing at import is one error for the batch', async (t) => {
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => python.pool.close())
  const rule = {
    kind: 'python' as const,
    id: 'Py.Broken',
    path: 'rules/broken.yml',
    data: { AnalysisType: 'rule', RuleID: 'Py.Broken', Filename: 'broken.py', LogTypes: ['Editor.Audit'] },
    pythonSource: 'raise RuntimeError("no config at import")\n\n\ndef rule(event):\n    return True\n',
    pythonPath: 'rules/broken.py',
  }
  const out = await python.evaluateBatch(rule, contextWith(), [{ a: 1 }, { a: 2 }, { a: 3 }])
  t.match(out, {
    error: /^the rule module failed to import: RuntimeError: no config at import \(rules\/broken\.py, line 1\)$/,
  })
})
