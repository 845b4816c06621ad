// The schema of the delivery outbox in PostgreSQL (migration version 4): one row per (alert,
// destination) with its state, the current round's attempts, budget start and next attempt, and
// the claim of the replica sending it now (`claimed_by` until `claimed_until`: a dead replica's
// claims return when that time passes). Kept apart from migrations.ts (one line per version there).
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
