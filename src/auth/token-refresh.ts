// The token store read again on a timer (tokens made by `rulekeeper token` while the server runs,
// or revoked), and its usage times written back; a failed read keeps the tokens last read.
import type { Logger } from '../log.js'
import type { TokenStore } from './token-store.js'

/** Starts the timer (unref'd: it never keeps the process alive); answers the function that stops it. */
export function startTokenRefresh(tokens: TokenStore, everyMs: number, logger: Logger): () => void {
  const timer = setInterval(() => {
    try {
      tokens.refresh()
      tokens.flushUsage()
    } catch (err) {
      logger.warn({ err }, 'cannot re-read the token store')
    }
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
