// What the API middleware puts on Koa's context state, typed in one place.
import type { TokenRecord } from '../auth/token-store.js'

export interface ApiState {
  requestId: string
  token?: TokenRecord
  /** The parsed JSON body of a write (set by readJsonBody). */
  body?: unknown
}
