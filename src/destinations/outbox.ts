// The delivery outbox as destinations/index.ts and the API use it, whichever store keeps it: the
// file journal's dispatcher (dispatcher.ts, one process) or PostgreSQL's (state/pg-outbox.ts, shared
// by replicas, each delivery claimed by one of them at a time). Both send with attempt.ts.
import type { DeliveryState } from './journal.js'

/** The delivery as the alert shows it (`destinations` of the alert shape): updated in place. */
export interface DeliveryEntry {
  id: string
  state: DeliveryState
  attempts: number
  lastError: string | null
}

export interface DeliveryOutbox {
  /** Takes over a delivery (a new alert's, or one found at start); a pending one is sent when due. */
  add(alertId: string, entry: DeliveryEntry, budgetStart: number, nextAt: number): void
  /** Failed deliveries of the alert start a new round (same idempotency key); answers how many. */
  redeliver(alertId: string): Promise<number>
  /** The dead letters (`/status`'s `delivery.failed`). */
  failed(): Array<{ alertId: string; destinationId: string; attempts: number; lastError: string | null }>
  /** Deliveries by destination and state (the metrics' gauge). */
  counts(): Map<string, Record<DeliveryState, number>>
  /** Stops sending: requests in flight aborted (they stay pending and are sent again). */
  close(): void | Promise<void>
}
