// What the API middleware puts on Koa's context state, typed in one place.
import type { TokenRecord } from '../auth/token-store.js'

export interface ApiState {
  requestId: string
  token?: TokenRecord
  /** The parsed JSON body of a write (set by readJsonBody). */
  body?: unknown
  /** The id of the token a refused request presented (never its secret), for the log. */
  presentedTokenId?: string
  /** What a write did (set by the rule routes), for its log line. */
  write?: { kind: string; ruleId: string; change: string; commit: string | null }
}
