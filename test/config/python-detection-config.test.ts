// `detection.python` (warm detection workers, budgets, quarantine): each wrong value is a problem
// named by its key path, the defaults file's values are valid, and the values reach the engine.
import t from 'tap'
import { loadServiceConfig } from '../../src/config-sections.js'
import { pythonDetection } from '../../src/detect/config.js'

function problems(over: unknown): string[] {
  try {
    loadServiceConfig({}, over)
  } catch (err) {
    return (err as Error).message.split('\n').slice(1)
  }
  return []
}

t.test('detection.python: every wrong value named by its key path', async (t) => {
  t.same(
    problems({
      detection: { python: { isolation: 'none', budgetMs: 5, budgetMsPerRecord: -1, quarantineAfter: 0, budget: 1 } },
    }),
    [
      '  detection.python.budget: unknown key; did you mean budgetMs?',
      '  detection.python.isolation: must be shared or per-rule',
      '  detection.python.budgetMs: must be a whole number of milliseconds, 10 or more',
      '  detection.python.budgetMsPerRecord: must be a number of milliseconds from 0 to 60000',
      '  detection.python.quarantineAfter: must be a positive integer',
    ],
  )
  t.same(problems({ detection: { python: 'shared' } }), ['  detection.python: must be a map'])
  t.same(
    problems({ detection: { python: { share: { recordMs: 5, batchBaseMs: 1.5, batchPerRecordMs: -1, record: 1 } } } }),
    [
      '  detection.python.share.record: unknown key; did you mean recordMs?',
      '  detection.python.share.recordMs: must be a whole number of milliseconds from 10 to 3600000',
      '  detection.python.share.batchBaseMs: must be a whole number of milliseconds from 10 to 3600000',
      '  detection.python.share.batchPerRecordMs: must be a number of milliseconds from 0 to 60000',
    ],
  )
  t.same(problems({ detection: { python: { share: 250 } } }), ['  detection.python.share: must be a map'])
})

t.test('detection.python: valid values pass and are handed over as given', async (t) => {
  const over = {
    detection: {
      python: {
        isolation: 'per-rule',
        budgetMs: 250,
        budgetMsPerRecord: 0.5,
        quarantineAfter: 5,
        share: { recordMs: 100, batchPerRecordMs: 0.5 },
      },
    },
  }
  t.same(problems(over), [])
  const config = loadServiceConfig({}, over) as unknown as Record<string, unknown>
  t.same(pythonDetection(config), {
    isolation: 'per-rule',
    budgetMs: 250,
    budgetMsPerRecord: 0.5,
    quarantineAfter: 5,
    // merged over the defaults file's
    share: { recordMs: 100, batchBaseMs: 250, batchPerRecordMs: 0.5 },
  })
  const defaults = loadServiceConfig({}) as unknown as Record<string, unknown>
  t.same(
    pythonDetection(defaults),
    {
      isolation: 'shared',
      budgetMsPerRecord: 2,
      quarantineAfter: 3,
      share: { recordMs: 250, batchBaseMs: 250, batchPerRecordMs: 1 },
    },
    'the defaults file',
  )
})
