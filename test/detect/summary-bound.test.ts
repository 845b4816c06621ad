// A group's summary counts are bounded (issue 27 finding 10: they grew with every distinct value
// matched): at most MAX_SUMMARY_VALUES values per attribute are counted, later new values under
// OTHERS; the alert's `summary` (the top 5 values, as Panther's summary attributes show) is unchanged.
import t from 'tap'
import { type Group, Grouper, MAX_SUMMARY_VALUES, OTHERS, type RuleMeta, summaryOf } from '../../src/detect/grouping.js'

const rule: RuleMeta = {
  id: 'R.Summary',
  kind: 'simple',
  revision: null,
  logTypes: ['Editor.Audit'],
  threshold: 1,
  dedupPeriodMinutes: 60,
  createAlert: true,
  summaryAttributes: ['user', 'tags'],
  description: '',
  runbook: '',
  reference: '',
  outputIds: [],
}

t.test('distinct values past the bound are counted as others', async (t) => {
  const g = new Grouper()
  const at = Date.parse('2026-11-20T10:00:00.000Z')
  let group: Group | undefined
  for (let i = 0; i < 5000; i++) {
    const user = i % 10 === 0 ? 'admin' : i % 10 === 1 ? 'root' : `user${i}`
    group = g.add(
      rule,
      { title: 't', dedup: 'd', severity: 'LOW', alertContext: {} },
      at,
      { user, tags: [`t${i}`, 'common'] },
      at,
    ).group
  }
  const counts = group!.summaryCounts
  t.ok(
    Object.keys(counts.user!).length <= MAX_SUMMARY_VALUES + 1,
    `user values kept: ${Object.keys(counts.user!).length}`,
  )
  t.ok(
    Object.keys(counts.tags!).length <= MAX_SUMMARY_VALUES + 1,
    `tag values kept: ${Object.keys(counts.tags!).length}`,
  )
  const total = Object.values(counts.user!).reduce((a, n) => a + n, 0)
  t.equal(total, 5000, 'every match is counted, kept values and others')
  t.ok(counts.user![OTHERS]! > 0, 'the values past the bound are counted as others')
  const summary = summaryOf(group!)
  t.same(summary.user!.slice(0, 2), [
    { value: 'admin', count: 500 },
    { value: 'root', count: 500 },
  ])
  t.same(summary.tags![0], { value: 'common', count: 5000 })
  t.equal(summary.user!.length, 5, 'top 5, others never among them')
  t.notOk(summary.user!.some((v) => v.value === OTHERS))
})
