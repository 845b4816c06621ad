// The ingest load shared by the audit-ingest and detect-ingest benches: autocannon posting
// 100-record NDJSON deliveries to /http/editor-audit on 32 connections, record ids unique per
// request, counting what the server acknowledged. Several loads at once (one per replica) share the
// connections and keep their ids apart by a prefix each.
export const RECORDS_PER_REQUEST = 100
export const CONNECTIONS = 32

export type Autocannon = (opts: Record<string, unknown>) => Promise<any>

/** autocannon, a dev dependency loaded only when an ingest bench runs. */
export async function importAutocannon(): Promise<Autocannon> {
  return ((await import('autocannon' as string)) as { default: Autocannon }).default
}

/**
 * A 100-record NDJSON body split at its id placeholder: `template.join(x)` gives a body whose ids
 * are `x-0` … `x-99`, so nothing is a duplicate. Record i's user is `user(i)`.
 */
export function bodyTemplate(user: (i: number) => string = () => 'dana@example.com'): string[] {
  const parts: string[] = []
  for (let i = 0; i < RECORDS_PER_REQUEST; i++)
    parts.push(
      JSON.stringify({
        ip_address: '203.0.113.10',
        team_id: '4821',
        user_email: user(i),
        metadata: {
          id: `@@-${i}`,
          timestamp: `2026-11-20T${String(8 + (i % 3)).padStart(2, '0')}:01:12.310Z`,
          context: {
            auth_id: 'idp|dana',
            ghost_mode: false,
            privacy_mode: 'PRIVACY_MODE_NO_TRAINING',
            request_id: `req_${i}`,
          },
        },
        invite_email_sent: {
          invite_id: 'inv_31',
          role: 'member',
          sender_user_id: '77',
          recipient_email: 'fay@example.org',
          sender_email: 'dana@example.com',
        },
      }),
    )
  return parts.join('\n').split('@@')
}

export interface IngestLoadOptions {
  /** The user of record i of a request (default: one user). */
  user?: (i: number) => string
  /** Connections of this load (default CONNECTIONS). */
  connections?: number
  /** The start of every record id (default `b`): loads running at once use different ones. */
  idPrefix?: string
}

/** Runs of the load against one server; the counters add up over runs until the bench resets them. */
export class IngestLoad {
  /** Records the server acknowledged (the answers' `accepted`). */
  accepted = 0
  /** Answers other than 200. */
  refused = 0
  /** 200 answers that accepted fewer records than the request held. */
  partial = 0
  private seq = 0
  private readonly template: string[]
  private readonly connections: number
  private readonly idPrefix: string

  constructor(
    private readonly autocannon: Autocannon,
    private readonly url: string,
    private readonly token: string,
    options: IngestLoadOptions = {},
  ) {
    this.template = bodyTemplate(options.user)
    this.connections = options.connections ?? CONNECTIONS
    this.idPrefix = options.idPrefix ?? 'b'
  }

  /** Zeroes the counters (after a warm-up). */
  reset(): void {
    this.accepted = 0
    this.refused = 0
    this.partial = 0
  }

  /** `seconds` of load; autocannon's result (duration, latency, errors, timeouts). */
  run(seconds: number): Promise<any> {
    return this.autocannon({
      url: `${this.url}/http/editor-audit`,
      connections: this.connections,
      duration: seconds,
      requests: [
        {
          method: 'POST',
          headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/x-ndjson' },
          setupRequest: (req: any) => ({ ...req, body: this.template.join(`${this.idPrefix}${this.seq++}`) }),
          onResponse: (status: number, body: string) => {
            if (status !== 200) return void this.refused++
            const n = JSON.parse(body).accepted as number
            this.accepted += n
            if (n !== RECORDS_PER_REQUEST) this.partial++
          },
        },
      ],
    })
  }
}
