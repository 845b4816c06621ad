// LateRules.revisionNotices (late-rules.ts): the debts a restart carries are said, once per rule, to
// be evaluated with the rule as the revision served now has it — or not at all when that revision
// does not enable the rule; nothing is said when the revision is the one the rule was late at.
import t from 'tap'
import { LateRules } from '../../src/detect/late-rules.js'
import type { LiveIndex, LiveRule } from '../../src/detect/live-rules.js'

const live = (revision: string, ids: string[]): LiveIndex => ({
  revision,
  byLogType: new Map([['Editor.Audit', ids.map((id) => ({ meta: { id } }) as unknown as LiveRule)]]),
  broken: [],
  rules: ids.length,
  batched: [],
})
const owed = (revision: string) => ({ revision, since: '2026-11-27T10:00:00.000Z', logs: { 'a.ndjson': 0 } })

t.test('a debt at another revision: evaluated with the rule served now, or not when it is not enabled', async (t) => {
  const late = new LateRules(() => {})
  late.carry({ 'Py.Kept': owed('r1'), 'Py.Gone': owed('r1'), 'Py.Same': owed('r2') })
  const notices = late.revisionNotices(live('r2', ['Py.Kept', 'Py.Same']))
  t.same(
    notices.map((n) => [n.ruleId, n.revision, n.record, n.error]),
    [
      [
        'Py.Kept',
        'r2',
        null,
        'the records this rule owed since 2026-11-27T10:00:00.000Z (late at revision r1) are evaluated with the rule as it is at revision r2',
      ],
      [
        'Py.Gone',
        'r2',
        null,
        'the records this rule owed since 2026-11-27T10:00:00.000Z (late at revision r1) are not evaluated: the rule is not enabled at revision r2',
      ],
    ],
  )
  t.same(late.revisionNotices(live('r2', ['Py.Kept', 'Py.Same'])), [], 'said once')
  t.same(new LateRules(() => {}).revisionNotices(live('r2', [])), [], 'no debt, nothing to say')
})
