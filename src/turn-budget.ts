// Long loops on the event loop (a reconcile of 50,000 files, a tree walk) give the loop back
// regularly: `pass()` yields a macrotask turn (setImmediate) once the loop has been held for
// `sliceMs` since the last yield, so requests, ingest acknowledgements and /healthz are answered
// between slices. Awaiting a resolved promise is not enough: microtasks never let I/O in.
import { setImmediate as nextTurn } from 'node:timers/promises'

export class TurnBudget {
  private since = performance.now()

  constructor(private readonly sliceMs = 10) {}

  /** Yields to the event loop when this slice has run for `sliceMs` or more. */
  async pass(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return
    await nextTurn()
    this.since = performance.now()
  }
}
