// Each test's log type reaches the Python runner (`logType` of the job's test, for data models,
// detections.md §4): the event's `p_log_type`, else the test's `LogType`, else the rule's first
// `LogTypes` entry, else none.
import t from 'tap'
import { createScheduledEngine } from '../../../src/engine/python/scheduled-engine.js'
import type { Job, RunLimits } from '../../../src/engine/python/protocol.js'
import type { WorkerPool } from '../../../src/engine/python/worker-pool.js'
import type { RuleFile } from '../../../src/rules/model.js'
import { contextWith, dataModelFile } from './fixtures.js'

const limits: RunLimits = {
  timeoutMs: 1000,
  memoryBytes: 1 << 29,
  cpuSeconds: 1,
  fileBytes: 1 << 20,
  maxProcesses: 8,
  outputBytes: 1 << 16,
}

/** An engine over a pool that records the job instead of running it. */
function recording(): { jobs: Job[]; engine: ReturnType<typeof createScheduledEngine>['engine'] } {
  const jobs: Job[] = []
  const run = async (job: Job) => {
    jobs.push(job)
    return []
  }
  const pool = { run } as unknown as WorkerPool
  return { jobs, engine: createScheduledEngine(pool, limits).engine }
}

const rule = (data: Record<string, unknown>): RuleFile => ({
  kind: 'python',
  id: 'Py.LogType',
  path: 'rules/py/py.yml',
  data: { AnalysisType: 'rule', RuleID: 'Py.LogType', Filename: 'py.py', Severity: 'Low', ...data },
  pythonSource: 'def rule(event):\n    return True\n',
  pythonPath: 'rules/py/py.py',
})

t.test("a test's LogType, else the rule's first log type", async (t) => {
  const { jobs, engine } = recording()
  await engine.runTests(
    rule({
      LogTypes: ['Editor.Audit', 'GitHub.Audit'],
      Tests: [
        { Name: 'own', ExpectedResult: true, LogType: 'GitHub.Audit', Log: {} },
        { Name: 'inherited', ExpectedResult: false, Log: {} },
      ],
    }),
    contextWith(),
  )
  t.equal(jobs.length, 1)
  const job = jobs[0]!
  if (job.op !== 'test') throw new Error(`a ${job.op} job instead of the tests`)
  t.same(
    job.tests.map((x) => x.logType),
    ['GitHub.Audit', 'Editor.Audit'],
  )
})

t.test('a rule without log types (a scheduled rule) sends none', async (t) => {
  const { jobs, engine } = recording()
  await engine.runTests(rule({ Tests: [{ Name: 'x', ExpectedResult: true, Log: {} }] }), contextWith())
  const job = jobs[0]!
  if (job.op !== 'test') throw new Error(`a ${job.op} job instead of the tests`)
  t.notOk('logType' in job.tests[0]!)
})

t.test("the event's p_log_type comes first, and the job carries that log type's data model", async (t) => {
  const { jobs, engine } = recording()
  const ctx = contextWith(
    dataModelFile('Model.Editor', ['Editor.Audit'], [{ Name: 'actor', Path: 'user' }]),
    dataModelFile('Model.GitHub', ['GitHub.Audit'], [{ Name: 'actor', Path: 'actor' }]),
  )
  await engine.runTests(
    rule({
      LogTypes: ['Editor.Audit', 'GitHub.Audit'],
      Tests: [
        { Name: 'own', ExpectedResult: true, Log: { p_log_type: 'GitHub.Audit' } },
        { Name: 'over LogType', ExpectedResult: true, LogType: 'Editor.Audit', Log: { p_log_type: 'GitHub.Audit' } },
        { Name: 'not a string', ExpectedResult: true, Log: { p_log_type: 7 } },
      ],
    }),
    ctx,
  )
  const job = jobs[0]!
  if (job.op !== 'test') throw new Error(`a ${job.op} job instead of the tests`)
  t.same(
    job.tests.map((x) => x.logType),
    ['GitHub.Audit', 'GitHub.Audit', 'Editor.Audit'],
  )
  t.same(job.dataModels?.map((m) => [m.id, m.logTypes]).sort(), [
    ['Model.Editor', ['Editor.Audit']],
    ['Model.GitHub', ['GitHub.Audit']],
  ])
})
