// One log line per alert created, written once the alert's commit is durable: rule id, alert id,
// dedup string, severity, event count and the destinations it was routed to — never its events or
// alert context (they hold the records' content). Wraps the alert hook detection was given
// (destinations), so the line comes before the delivery lines of the same alert.
import type { Logger } from '../log.js'
import type { AlertHook } from './alert-hook.js'

export function withAlertLog(logger: Logger, inner?: AlertHook): AlertHook {
  return {
    restored: (groups, context) => inner?.restored?.(groups, context),
    created: (group, rule, match) => inner?.created(group, rule, match),
    committed(groups) {
      for (const g of groups)
        logger.info(
          {
            ruleId: g.ruleId,
            ruleKind: g.ruleKind,
            alertId: g.id,
            dedup: g.dedup,
            severity: g.severity,
            eventCount: g.eventCount,
            destinations: g.destinations.map((d) => d.id),
          },
          'alert created',
        )
      inner?.committed(groups)
    },
  }
}
