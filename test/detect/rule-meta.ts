// A live rule's metadata and a stored record for tests that drive the alert book, grouping or the rule worker directly:
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

/** The one stored file the book tests read from, and a record of it at `offset`. */
export const BOOK_FILE = 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson'
export const storedRecord = (offset: number) => ({
  file: BOOK_FILE,
  offset,
  logType: 'Editor.Audit',
  eventTime: '2026-11-20T10:00:00.000Z',
  record: { n: offset },
})
