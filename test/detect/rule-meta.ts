// A live rule's metadata for tests that drive the alert book, grouping or the rule worker directly:
// a simple rule on Editor.Audit with Panther's defaults (threshold 1, 60-minute dedup), changed by
// what the test gives.
import type { RuleMeta } from '../../src/detect/grouping.js'

export function ruleMeta(over: Partial<RuleMeta> & { id: string }): RuleMeta {
  return {
    kind: 'simple',
    revision: null,
    logTypes: ['Editor.Audit'],
    threshold: 1,
    dedupPeriodMinutes: 60,
    createAlert: true,
    summaryAttributes: [],
    description: '',
    runbook: '',
    reference: '',
    outputIds: [],
    ...over,
  }
}
