// Runs that never overlap, each named (a correlation rule, a scheduled query): the queue says which
// names wait and which one runs, so a schedule does not queue a name twice and a manual run can be
// refused while that name is due or running. Used by detect/correlation-schedule.ts and
// query/query-scheduler.ts.

export class RunQueue {
  private readonly waiting = new Set<string>()
  private tail: Promise<void> = Promise.resolve()
  private running: string | null = null

  /** Whether a run of `name` waits in the queue or is running. */
  has(name: string): boolean {
    return this.running === name || this.waiting.has(name)
  }

  /** Whether a run of `name` waits (not started yet). */
  waits(name: string): boolean {
    return this.waiting.has(name)
  }

  /** Runs `fn` when the queue reaches it; its result (a failure rejects this, never the queue). */
  add<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.waiting.add(name)
    const done = this.tail.then(async () => {
      this.waiting.delete(name)
      this.running = name
      try {
        return await fn()
      } finally {
        this.running = null
      }
    })
    this.tail = done.then(
      () => {},
      () => {},
    )
    return done
  }

  /** Resolves when every run queued so far has finished. */
  idle(): Promise<void> {
    return this.tail
  }
}
