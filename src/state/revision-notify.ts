// Pushes across replicas over the PostgreSQL state store: each replica LISTENs on the channel
// `rulekeeper_revision` on a connection of its own (outside the pool, which hands connections out
// and back), and `announce`s a revision it learned with NOTIFY. A lost connection is opened again
// with a growing pause; every (re)connect is reported, since notifications sent while away are lost,
// and an announcement made while away is sent then.
import pg from 'pg'
import type { Logger } from '../log.js'

export const REVISION_CHANNEL = 'rulekeeper_revision'

/** What a notification may carry: a commit id (SHA-1 or SHA-256), nothing else is acted on. */
const REVISION = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

export interface RevisionChannelOptions {
  url: string
  logger: Logger
  /** Another replica (or this one) announced this revision. */
  onRevision(revision: string): void
  /** The channel is (again) listening: what was announced while it was not is unknown. */
  onConnect(): void
  /** Pauses between attempts to connect again (default 0.5 s doubling to 30 s). */
  retryMs?: { first: number; max: number }
  connectTimeoutMs?: number
}

export class RevisionChannel {
  private client: pg.Client | null = null
  private closed = false
  private pauseMs: number
  private timer: NodeJS.Timeout | null = null
  /** The newest revision announced while no connection listened: sent at the next connect. */
  private pending: string | null = null
  /** Times the channel started listening (the first connect and every reconnect). */
  connects = 0

  constructor(private readonly o: RevisionChannelOptions) {
    this.pauseMs = o.retryMs?.first ?? 500
  }

  /** Starts connecting; resolves once the first attempt has succeeded or failed (it then retries). */
  async start(): Promise<void> {
    await this.connect()
  }

  /** Tells every listening replica (this one too) of `revision`; kept for the next connect when away. */
  async announce(revision: string): Promise<void> {
    if (!REVISION.test(revision)) return
    const client = this.client
    if (!client) {
      this.pending = revision
      return
    }
    try {
      await client.query('SELECT pg_notify($1, $2)', [REVISION_CHANNEL, revision])
    } catch (err) {
      this.pending = revision
      this.o.logger.warn({ err: (err as Error).message, revision }, 'cannot announce a revision to the other replicas')
    }
  }

  get listening(): boolean {
    return this.client !== null
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    const client = this.client
    this.client = null
    await client?.end().catch(() => {})
  }

  private async connect(): Promise<void> {
    if (this.closed) return
    const client = new pg.Client({
      connectionString: this.o.url,
      application_name: 'rulekeeper-revisions',
      connectionTimeoutMillis: this.o.connectTimeoutMs ?? 10_000,
      keepAlive: true,
    })
    let lost = false
    const onLost = (err?: Error) => {
      if (lost) return
      lost = true
      if (this.client === client) this.client = null
      client.end().catch(() => {})
      if (this.closed) return
      this.o.logger.warn({ err: err?.message }, 'the revision channel lost its connection; connecting again')
      this.retry()
    }
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (msg) => {
      if (msg.channel === REVISION_CHANNEL && msg.payload && REVISION.test(msg.payload)) this.o.onRevision(msg.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${REVISION_CHANNEL}`)
    } catch (err) {
      onLost(err as Error)
      return
    }
    if (this.closed || lost) {
      await client.end().catch(() => {})
      return
    }
    this.client = client
    this.connects++
    this.pauseMs = this.o.retryMs?.first ?? 500
    const pending = this.pending
    this.pending = null
    if (pending) await this.announce(pending)
    this.o.onConnect()
  }

  private retry(): void {
    if (this.closed || this.timer) return
    const pause = this.pauseMs
    this.pauseMs = Math.min(pause * 2, this.o.retryMs?.max ?? 30_000)
    this.timer = setTimeout(() => {
      this.timer = null
      void this.connect()
    }, pause)
    this.timer.unref()
  }
}
