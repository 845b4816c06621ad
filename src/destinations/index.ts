// Entry point of destinations (alerts.md §4): reads the config sections, opens the delivery
// outbox (the journal in the data directory, or PostgreSQL's shared by replicas), and gives detection its AlertHook (routing at creation, delivery after the commit);
// at start it takes over every alert's deliveries not yet acknowledged. Gives the API the
// redelivery of an alert (`retryDeliveries`, api/redelivery-route.ts) and `/status`'s `delivery`
// and `destinations` parts, and polls the CLI's redelivery requests.
import type { AlertHook } from '../detect/alert-hook.js'
import { alertView, type Group } from '../detect/grouping.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import type { RuleProblem } from '../rules/model.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { type Destination, parseDestinationConfig } from './config.js'
import type pg from 'pg'
import { PgOutbox, storedAlertView } from '../state/pg-outbox.js'
import { type DeliveryEntry, Dispatcher } from './dispatcher.js'
import { DeliveryJournal, keyOf } from './journal.js'
import type { DeliveryOutbox } from './outbox.js'
import { createDestinationMetrics } from './metrics.js'
import { readRedeliverRequests } from './redeliver-requests.js'
import { route, unknownOutputIdWarnings, unknownOutputIds } from './routing.js'

export interface Destinations {
  destinations: readonly Destination[]
  hook: AlertHook
  dispatcher: DeliveryOutbox
  /** `/status`: `{ delivery: { failed }, destinations: { unknown } }`. */
  status(index: RuleIndex): Record<string, unknown>
  /** A rule's warnings for OutputIds naming no configured destination (its API representation). */
  ruleWarnings(rule: Pick<IndexedRule, 'view'>): RuleProblem[]
  /** Queues the alert's failed deliveries again; answers how many. */
  redeliver(alertId: string): Promise<number>
  /** `POST /alerts/{id}/deliveries/retry`: queues the alert's failed deliveries again; its view, or null when no alert. */
  retryDeliveries(alertId: string): Promise<Record<string, unknown> | null>
  close(): Promise<void>
}

const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

export async function createDestinations(opts: {
  config: Record<string, unknown>
  env: Record<string, string | undefined>
  dataDir: string
  logger: Logger
  metrics: Registry
  /** How often redelivery requests of the CLI are looked for (default 1 s). */
  pollMs?: number
  /** The shared PostgreSQL store (`state.postgres`): the outbox there; else the journal in `dataDir`. */
  postgres?: { db: pg.Pool; replica: string }
}): Promise<Destinations> {
  const { destinations, delivery } = parseDestinationConfig(opts.config, opts.env)
  const logger = opts.logger.child({ component: 'destinations' })
  const pgStore = opts.postgres
  const journal = pgStore ? null : await DeliveryJournal.open(opts.dataDir)
  let groups: ReadonlyMap<string, Group> = new Map()
  let context: (g: Group) => Promise<Record<string, unknown>> = async (g) => g.alertContext ?? {}
  /** The alert's API shape, its context read back (detection keeps it on disk). */
  const viewOf = async (g: Group) => alertView(g, await context(g))
  let dispatcher: DeliveryOutbox | null = null
  const metrics = createDestinationMetrics(opts.metrics, () => dispatcher?.counts() ?? new Map())
  const alertViewOf = async (id: string) => {
    const g = groups.get(id)
    if (g?.alert) return viewOf(g)
    // Over PostgreSQL another replica may have created the alert: its stored view.
    return pgStore ? storedAlertView(pgStore.db, id) : undefined
  }
  const common = { destinations, policy: delivery, alertView: alertViewOf, logger, metrics }
  dispatcher = pgStore
    ? new PgOutbox({ ...common, db: pgStore.db, replica: pgStore.replica })
    : new Dispatcher({ ...common, journal: journal! })
  const d = dispatcher
  const knownIds: ReadonlySet<string> = new Set(destinations.map((x) => x.id))
  const warned = new Set<string>()

  const hook: AlertHook = {
    restored(all, read) {
      groups = all
      context = read
      // The outbox after a restart: each alert's routed deliveries, in the state the journal last
      // gave them (PostgreSQL's outbox answers its own, and stores those it lacks as pending).
      const now = Date.now()
      for (const g of all.values()) {
        if (!g.alert) continue
        for (const entry of g.destinations as DeliveryEntry[]) {
          const j = journal?.last.get(keyOf(g.id, entry.id))
          if (j) Object.assign(entry, { state: j.s, attempts: j.n, lastError: j.e })
          else Object.assign(entry, { state: 'pending', attempts: 0, lastError: null })
          d.add(g.id, entry, j?.b ?? now, j?.at ?? now)
        }
      }
    },
    created(group, rule, match) {
      const r = route(
        { severity: group.severity, outputIds: rule.outputIds, dynamic: match.destinations },
        destinations,
      )
      for (const name of r.unknown) {
        const k = `${rule.id}\u0000${name}`
        if (warned.size < 10_000 && !warned.has(k)) {
          warned.add(k)
          logger.warn(
            { ruleId: rule.id, outputId: name, by: r.by },
            'the rule names a destination that is not configured',
          )
        }
      }
      group.destinations = r.ids.map((id) => ({ id, state: 'pending', attempts: 0, lastError: null }))
    },
    committed(created) {
      const now = Date.now()
      for (const g of created) for (const entry of g.destinations as DeliveryEntry[]) d.add(g.id, entry, now, now)
    },
  }

  let unknownFor: RuleIndex | null = null
  let unknown: Array<{ ruleId: string; outputId: string }> = []
  const status = (index: RuleIndex) => {
    if (unknownFor !== index) {
      unknown = unknownOutputIds(
        [...index.rules.values()].map((r) => ({ id: r.id, outputIds: strings(r.view.outputIDs) })),
        destinations,
      )
      unknownFor = index
    }
    return { delivery: { failed: d.failed() }, destinations: { configured: destinations.length, unknown } }
  }

  let polling = false
  const poll = async () => {
    if (polling) return
    polling = true
    try {
      for (const req of await readRedeliverRequests(opts.dataDir)) {
        const n = await d.redeliver(req.alertId)
        logger.info({ alertId: req.alertId, deliveries: n }, 'redelivery requested from the command line')
        await req.done()
      }
    } catch (err) {
      logger.warn({ err }, 'cannot read redelivery requests')
    } finally {
      polling = false
    }
  }
  const timer = setInterval(() => void poll(), opts.pollMs ?? 1000)
  timer.unref()
  void poll()

  return {
    destinations,
    hook,
    dispatcher: d,
    status,
    ruleWarnings: (rule) => unknownOutputIdWarnings(strings(rule.view.outputIDs), knownIds),
    redeliver: (id) => d.redeliver(id),
    async retryDeliveries(id) {
      const g = groups.get(id)
      if (!g?.alert) return null
      await d.redeliver(id)
      return viewOf(g)
    },
    async close() {
      clearInterval(timer)
      await d.close()
      await journal?.close()
    },
  }
}
