// The schema of singletons by lease (migration version 3): `leases`, one row per lease name with
// its holder, its fencing token (raised each time the lease changes hands) and when it expires, by
// the database's clock; `job_runs`, one row per (job, slot) run, unique, with the fence it ran
// under. Kept apart from migrations.ts so the list there stays one line per version.
export const LEASE_MIGRATION = {
  version: 3,
  name: 'singletons by lease',
  sql: `
    CREATE TABLE leases (
      name text PRIMARY KEY,
      holder text NOT NULL,
      fence bigint NOT NULL,
      expires_at timestamptz NOT NULL
    );
    -- A slot's run, recorded (its fence checked) before its output is committed: never two.
    CREATE TABLE job_runs (
      job text NOT NULL,
      slot timestamptz NOT NULL,
      holder text NOT NULL,
      fence bigint NOT NULL,
      ran_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (job, slot)
    );
  `,
}
