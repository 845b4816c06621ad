// The text of one match or signal line as the alert book queues it (the ledger keeps it as
// written): the match's fields in a fixed order, then its alert context as the text its size check
// made (output-caps.ts), so the context is serialized once.
import type { MatchFields, RuleMeta } from './grouping.js'
import { matchId } from './grouping.js'
import type { StoredRecord } from './stored-log.js'

export function matchLine(
  rec: Pick<StoredRecord, 'file' | 'offset' | 'logType' | 'eventTime'>,
  rule: RuleMeta,
  match: MatchFields,
  o: { alerting: boolean; limited: boolean; alertId: string | null; contextText: string },
): string {
  const fields = JSON.stringify({
    ...(o.limited ? { alertLimited: true } : {}),
    id: matchId(rule.id, rec.file, rec.offset),
    ruleId: rule.id,
    ruleKind: rule.kind,
    revision: rule.revision,
    logType: rec.logType,
    eventTime: rec.eventTime,
    record: { partition: rec.file, offset: rec.offset },
    dedup: match.dedup,
    title: match.title,
    severity: match.severity,
    signal: !o.alerting,
    alertId: o.alertId,
  })
  return `${fields.slice(0, -1)},"alertContext":${o.contextText}}`
}
