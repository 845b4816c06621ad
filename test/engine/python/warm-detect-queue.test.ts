// A warm slot's queue (scripted processes, no sandbox): a request cancelled while an earlier rule's
// batch runs is not sent again to a fresh worker after that rule is killed; requests still waiting
// when the pool closes are answered, not left pending.
import t from 'tap'
import { Quarantine } from '../../../src/engine/python/quarantine.js'
import { WarmDetection } from '../../../src/engine/python/warm-detect.js'
import type { RuleFile } from '../../../src/rules/model.js'
import { contextWith } from './fixtures.js'
import { SCRIPTED_LIMITS, scriptedProcess } from './scripted-process.js'

const limits = SCRIPTED_LIMITS

const rule = (id: string): RuleFile => ({
  kind: 'python',
  id,
  path: `rules/${id}.yml`,
  data: { AnalysisType: 'rule', RuleID: id, Filename: `${id}.py`, LogTypes: ['Editor.Audit'], Severity: 'Low' },
  pythonSource: 'def rule(event):\n    return False\n',
  pythonPath: `rules/${id}.py`,
})

/** Processes that start the first rule of each batch and then say nothing; the plans they got. */
function silentWorkers() {
  const plans: number[][] = []
  const take = async () =>
    scriptedProcess((text, send) => {
      // a batch is its header line, then its records' lines
      const header = text.slice(0, text.indexOf('\n'))
      const plan = (JSON.parse(header) as { plan: { k: number }[] }).plan.map((p) => p.k)
      plans.push(plan)
      send([`{"t":"s","k":${plan[0]}}`])
    })
  return { take, plans }
}

const settings = { isolation: 'shared' as const, workers: 1, budgetMs: 100, budgetMsPerRecord: 0 }
const oneShot = async () => ({ error: 'one-shot' })

t.test('a request cancelled during an earlier rule is not run again in a fresh worker', async (t) => {
  const { take, plans } = silentWorkers()
  const warm = new WarmDetection(take, limits, settings, new Quarantine(3), oneShot)
  t.teardown(() => warm.close())
  const ctx = contextWith()
  const cancel = new AbortController()
  const first = warm.evaluate(rule('A'), ctx, [{}])
  const second = warm.evaluate(rule('B'), ctx, [{}], cancel.signal)
  setTimeout(() => cancel.abort(new Error('the client went away')), 50)
  const [a, b] = await Promise.all([first, second])
  t.match(a, { results: [{ error: /budget/ }] }, 'the silent rule is killed at its deadline')
  t.match(b, { error: /not evaluated: .*went away/ })
  await new Promise((r) => setTimeout(r, 50)) // wait: an absence is the point (a second batch would be written by now)
  t.same(plans, [[0, 1]], 'one batch: the cancelled rule was not sent again')
})

t.test('requests left when the pool closes are answered', async (t) => {
  const { take } = silentWorkers()
  const warm = new WarmDetection(take, limits, settings, new Quarantine(3), oneShot)
  const ctx = contextWith()
  const first = warm.evaluate(rule('A'), ctx, [{}])
  const second = warm.evaluate(rule('B'), ctx, [{}])
  setTimeout(() => warm.close(), 50)
  const [a, b] = await Promise.all([first, second])
  t.ok('results' in a || 'error' in a, 'the running rule is answered')
  t.same(b, { error: 'not evaluated: the Python worker pool is closed' })
})
