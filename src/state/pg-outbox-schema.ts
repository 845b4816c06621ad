// The schema of the delivery outbox in PostgreSQL (migration version 4): one row per (alert,
// destination) with its state, the current round's attempts, budget start and next attempt, and
// the claim of the replica sending it now (`claimed_by` until `claimed_until`: a dead replica's
// claims return when that time passes). Kept apart from migrations.ts. And the rows a new alert's
// deliveries start as, which the commit that makes the alert inserts (pg-ledger.ts), so an alert is
// never durable without its deliveries, whatever happens to the replica that made it.
import type pg from 'pg'
import type { Group } from '../detect/grouping.js'

export const OUTBOX_MIGRATION = {
  version: 4,
  name: 'delivery outbox',
  sql: `
    CREATE TABLE deliveries (
      alert_id text NOT NULL,
      destination_id text NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      budget_start timestamptz NOT NULL,
      next_at timestamptz NOT NULL,
      claimed_by text,
      claimed_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (alert_id, destination_id)
    );
    CREATE INDEX deliveries_due ON deliveries (destination_id, next_at) WHERE state = 'pending';
    CREATE INDEX deliveries_failed ON deliveries (alert_id) WHERE state = 'failed';
  `,
}

/** Inserts every routed delivery of alerts made in this transaction as pending, due now (a row kept as it is). */
export async function queueDeliveries(client: pg.PoolClient, alerts: Iterable<Group>): Promise<void> {
  const ids: string[] = []
  const dests: string[] = []
  for (const g of alerts)
    for (const d of g.destinations as Array<{ id?: unknown }>)
      if (typeof d.id === 'string') {
        ids.push(g.id)
        dests.push(d.id)
      }
  if (ids.length === 0) return
  await client.query(
    `INSERT INTO deliveries (alert_id, destination_id, state, attempts, budget_start, next_at)
     SELECT a, t, 'pending', 0, now(), now() FROM unnest($1::text[], $2::text[]) AS u(a, t)
     ON CONFLICT (alert_id, destination_id) DO NOTHING`,
    [ids, dests],
  )
}
