// The PostgreSQL state store's schema, as an ordered list of versioned migrations, and the one
// function that applies them at start: in one transaction under a transaction-scoped advisory lock
// (pg_advisory_xact_lock), so replicas starting at once apply each migration exactly once and a
// start that fails half-way applies none; `schema_migrations` records what is applied. A migration
// is never edited once released: a change is a new version at the end.
import type pg from 'pg'
import { LEASE_MIGRATION } from './lease-schema.js'
import { OUTBOX_MIGRATION } from './pg-outbox-schema.js'
import { inTransaction } from './transaction.js'

export interface Migration {
  version: number
  name: string
  sql: string
}

/** The advisory lock key of schema changes (any 64-bit number other locks of rulekeeper do not use). */
export const MIGRATION_LOCK_KEY = 0x72_6b_6d_69_67 // "rkmig"

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'detection ledger',
    sql: `
      -- JSON is kept as text, as written: PostgreSQL's json types cannot hold every JSON text
      -- (an escaped NUL character), and the store never reads inside it.
      -- How far each replica's detection evaluated its own log files (a Checkpoint, as JSON).
      CREATE TABLE detection_checkpoints (
        replica text PRIMARY KEY,
        checkpoint text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Match and signal lines, as written, by the hour of their event time, with their alert's id.
      CREATE TABLE detection_matches (
        seq bigserial PRIMARY KEY,
        replica text NOT NULL,
        event_hour timestamptz NOT NULL,
        alert_id text,
        line text NOT NULL
      );
      CREATE INDEX detection_matches_hour ON detection_matches (event_hour, seq);
      CREATE INDEX detection_matches_alert ON detection_matches (alert_id) WHERE alert_id IS NOT NULL;
      -- The last state of each alert group (without its context), keyed by group id.
      CREATE TABLE alert_groups (
        id text PRIMARY KEY,
        replica text NOT NULL,
        state text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Each group's alert context, stored once (the first match's), read back when asked.
      CREATE TABLE alert_contexts (
        group_id text PRIMARY KEY,
        context text NOT NULL
      );
      CREATE TABLE rule_errors (
        seq bigserial PRIMARY KEY,
        replica text NOT NULL,
        error text NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'alert groups decided in the store',
    sql: `
      -- The columns a group is found, decided and listed by (its whole state stays in state).
      -- group_key: a hash of (rule, dedup string) (a dedup string may hold a NUL, which text cannot);
      -- created_at is the ISO text of the alert's creation (the API's cursor compares it as text).
      ALTER TABLE alert_groups
        ADD COLUMN group_key text COLLATE "C",
        ADD COLUMN rule_id text COLLATE "C",
        ADD COLUMN severity text COLLATE "C",
        ADD COLUMN status text COLLATE "C",
        ADD COLUMN window_start_ms bigint,
        ADD COLUMN event_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN alert boolean NOT NULL DEFAULT false,
        ADD COLUMN created_at text COLLATE "C",
        ADD COLUMN alerted_by text;
      ALTER TABLE alert_groups ALTER COLUMN id TYPE text COLLATE "C";
      CREATE INDEX alert_groups_key ON alert_groups (group_key, window_start_ms);
      CREATE INDEX alert_groups_created ON alert_groups (created_at DESC, id) WHERE alert;
      CREATE INDEX alert_groups_status ON alert_groups (status, created_at DESC, id) WHERE alert;
      CREATE INDEX alert_groups_rule ON alert_groups (rule_id, created_at DESC, id) WHERE alert;
      CREATE INDEX alert_groups_severity ON alert_groups (severity, created_at DESC, id) WHERE alert;
    `,
  },
  LEASE_MIGRATION,
  OUTBOX_MIGRATION,
  {
    version: 5,
    name: 'groups by rule and window',
    sql: `
      -- A scheduled rule's groups read again before its run (PgLedger.ruleGroups): alert or not.
      CREATE INDEX alert_groups_rule_window ON alert_groups (rule_id, window_start_ms);
      `,
  },
  {
    version: 6,
    name: 'alerts page lists',
    sql: `
      -- The alerts page's lists as the in-memory index keeps them (detect/alert-index.ts), newest
      -- first: per (rule, status) and per (severity, status), so a page filtered on both reads its
      -- rows in order (state/alert-page-sql.ts) instead of walking every alert past the others.
      CREATE INDEX alert_groups_rule_status ON alert_groups (rule_id, status, created_at DESC, id) WHERE alert;
      CREATE INDEX alert_groups_severity_status ON alert_groups (severity, status, created_at DESC, id) WHERE alert;
      -- A context is found by its group's id in the id's collation ("C", version 2): a join on the
      -- two uses the key (in the database's default collation it scanned every context).
      ALTER TABLE alert_contexts ALTER COLUMN group_id TYPE text COLLATE "C";
    `,
  },
]

/**
 * Applies the migrations `db` lacks, in version order, in one transaction under the advisory lock;
 * answers the versions applied by this call (none when another start applied them first).
 */
export async function migrate(db: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return inTransaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
    const have = new Set(rows.map((r) => r.version))
    const applied: number[] = []
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (have.has(m.version)) continue
      await client.query(m.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
      applied.push(m.version)
    }
    return applied
  })
}
