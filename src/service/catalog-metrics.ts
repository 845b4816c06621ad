// The catalog's gauges: rules served by kind and invalid files of the published revision, read from
// the published index when scraped (docs/operations.md).
import { Gauge, type Registry } from '../metrics.js'

/** What the catalog gauges read: the published index (rules/rule-index.ts). */
interface ServedIndex {
  readonly sorted: Readonly<Record<string, readonly string[]>>
  invalidFiles(): readonly unknown[]
}

/**
 * `rulekeeper_rules{kind}` and `rulekeeper_invalid_files`, read from the published index when
 * scraped (so they are right at start, after every write and every reconcile); the invalid-file
 * count is computed once per published index.
 */
export function registerCatalogMetrics(registry: Registry, index: () => ServedIndex): void {
  const invalid = new WeakMap<ServedIndex, number>()
  new Gauge({
    name: 'rulekeeper_rules',
    help: 'Rules served (valid, in the published revision), by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, ids] of Object.entries(index().sorted)) this.set({ kind }, ids.length)
    },
  })
  new Gauge({
    name: 'rulekeeper_invalid_files',
    help: 'Files of the published revision that are invalid (parse or schema errors, duplicate ids); /status lists them',
    registers: [registry],
    collect() {
      const current = index()
      const n = invalid.get(current) ?? current.invalidFiles().length
      invalid.set(current, n)
      this.set(n)
    },
  })
}
