// A lease in PostgreSQL (`leases`, migration 3): one holder at a time per name, by the database's
// clock. A holder takes or renews it with one upsert that succeeds only when the lease expired or
// is already its own, and answers the fencing token, raised each time the lease changes hands. It
// renews at a third of the time to live and counts the lease lost at once when a renewal fails or
// cannot be confirmed within the time to live (its local deadline starts when the renewal is sent).
import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import type { Logger } from '../log.js'

export interface LeaseOptions {
  /** The lease's name (one per family of singleton jobs). */
  name: string
  /** This replica's name; the holder is it plus a token of this process (a restart is another holder). */
  replica: string
  /** How long a taken or renewed lease lasts (ms; default 30,000); renewed at a third of it. */
  ttlMs?: number
}

const TAKE = `
  INSERT INTO leases AS l (name, holder, fence, expires_at)
  VALUES ($1, $2, 1, now() + make_interval(secs => $3::double precision / 1000))
  ON CONFLICT (name) DO UPDATE SET
    fence = CASE WHEN l.holder = excluded.holder AND l.expires_at >= now() THEN l.fence ELSE l.fence + 1 END,
    holder = excluded.holder,
    expires_at = excluded.expires_at
  WHERE l.expires_at < now() OR l.holder = excluded.holder
  RETURNING fence`

export class PgLease {
  readonly name: string
  readonly holder: string
  readonly ttlMs: number
  private held: number | null = null
  /** Local time until which the lease is surely still ours (the renewal's send time + the TTL). */
  private validUntil = 0
  private timer: NodeJS.Timeout | null = null
  private stopped = false
  private running: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: pg.Pool,
    o: LeaseOptions,
    private readonly logger: Logger,
  ) {
    this.name = o.name
    this.ttlMs = o.ttlMs ?? 30_000
    this.holder = `${o.replica}/${process.pid}/${randomBytes(4).toString('hex')}`
  }

  /** The fencing token while the lease is surely held, else null. */
  fence(): number | null {
    return this.held !== null && Date.now() < this.validUntil ? this.held : null
  }

  /** Tries to take the lease now, then keeps trying (or renewing) every third of the TTL. */
  start(): Promise<void> {
    this.running = this.attempt()
    return this.running
  }

  /** One take-or-renew; a failure or a refusal loses the lease at once. */
  private async attempt(): Promise<void> {
    const sent = Date.now()
    try {
      const { rows } = await this.db.query<{ fence: string }>(TAKE, [this.name, this.holder, this.ttlMs])
      if (this.stopped) return
      if (rows[0]) {
        const fence = Number(rows[0].fence)
        if (fence !== this.held) this.logger.info({ lease: this.name, holder: this.holder, fence }, 'took the lease')
        this.held = fence
        this.validUntil = sent + this.ttlMs
      } else this.lose('another replica holds it')
    } catch (err) {
      if (!this.stopped) this.lose(`the renewal failed: ${(err as Error).message}`)
    } finally {
      if (!this.stopped) {
        this.timer = setTimeout(
          () => {
            this.running = this.attempt()
          },
          Math.max(0, sent + this.ttlMs / 3 - Date.now()),
        )
        this.timer.unref()
      }
    }
  }

  private lose(why: string): void {
    if (this.held !== null) this.logger.warn({ lease: this.name, holder: this.holder, why }, 'lost the lease')
    this.held = null
    this.validUntil = 0
  }

  /**
   * Stops renewing. `release`: ends the lease now (when still ours) so another replica takes it at
   * once; without it the lease lapses after its TTL (what a killed replica leaves).
   */
  async stop(release = true): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running.catch(() => {})
    const was = this.held
    this.held = null
    if (release && was !== null)
      await this.db
        .query('UPDATE leases SET expires_at = now() WHERE name = $1 AND holder = $2 AND fence = $3', [
          this.name,
          this.holder,
          was,
        ])
        .catch((err: unknown) => this.logger.warn({ err, lease: this.name }, 'cannot release the lease'))
  }
}
