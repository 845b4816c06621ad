// Scheduled slots over PostgreSQL (the SlotGuard of slot-guard.ts): one lease for a family of jobs
// (scheduled queries, correlation rules), so one replica runs them; each run recorded in
// `job_runs` by (job, slot), unique, just before its output is committed, in one statement that
// also checks the run's fence is still the lease's (locking the lease row, so a takeover waits for
// it or refuses it). A deposed holder's run is refused, a slot never runs twice, and a new holder
// resumes after the last recorded slot (the schedulers' catch-up rules decide which slot is due).
import type pg from 'pg'
import type { PgLease } from './lease.js'
import type { SlotGuard } from './slot-guard.js'

const RECORD = `
  INSERT INTO job_runs (job, slot, holder, fence)
  SELECT $1, $2, l.holder, l.fence FROM leases l
  WHERE l.name = $3 AND l.holder = $4 AND l.fence = $5 AND l.expires_at > now()
  FOR SHARE
  ON CONFLICT (job, slot) DO NOTHING
  RETURNING fence`

export class PgSlots implements SlotGuard {
  private readonly last = new Map<string, number>()

  constructor(
    private readonly db: pg.Pool,
    private readonly lease: PgLease,
    /** The jobs' prefix in `job_runs` (`query:`, `correlation:`): one table for every family. */
    private readonly family: string,
  ) {}

  leading(): boolean {
    return this.lease.fence() !== null
  }

  lastSlot(job: string): number | undefined {
    return this.last.get(job)
  }

  async refresh(): Promise<void> {
    const { rows } = await this.db.query<{ job: string; slot: Date }>(
      'SELECT job, max(slot) AS slot FROM job_runs WHERE starts_with(job, $1) GROUP BY job',
      [this.family],
    )
    for (const r of rows) {
      const job = r.job.slice(this.family.length)
      const ms = r.slot.getTime()
      if ((this.last.get(job) ?? -Infinity) < ms) this.last.set(job, ms)
    }
  }

  /** Runs a slot while leading and newer than the last recorded (the record itself comes at commit). */
  async begin(job: string, slotMs: number): Promise<boolean> {
    const last = this.last.get(job)
    return this.leading() && (last === undefined || slotMs > last)
  }

  async commit(job: string, slotMs: number): Promise<boolean> {
    const fence = this.lease.fence()
    if (fence === null) return false
    const { rows } = await this.db.query(RECORD, [
      this.family + job,
      new Date(slotMs),
      this.lease.name,
      this.lease.holder,
      fence,
    ])
    if (rows.length === 0) return false
    if ((this.last.get(job) ?? -Infinity) < slotMs) this.last.set(job, slotMs)
    return true
  }
}
