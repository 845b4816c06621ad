// The seam between the schedulers (scheduled queries, correlation rules) and where their slots are
// kept: whether this process runs scheduled slots now, the last slot each job ran, and the two
// points a slot's run passes. The file store's guard is the slot record in the data directory (one
// process: always leading, a slot recorded before its run); PostgreSQL's is a lease with a fence
// and a run table (lease-slots.ts), so one replica at a time runs them and a slot runs once.
export interface SlotGuard {
  /** Whether this process runs scheduled slots now (the holder of the lease; one process: always). */
  leading(): boolean
  /** The last slot the job ran for (ms since the epoch), as last read; undefined: none. */
  lastSlot(job: string): number | undefined
  /** Reads the slots recorded since (another replica may have run some); absent for one process. */
  refresh?(): Promise<void>
  /**
   * Before a slot's run: whether to run it. The file store records the slot here (a run cut short
   * by a crash is not run again: at most once); `keep` names the jobs still scheduled.
   */
  begin(job: string, slotMs: number, keep: ReadonlySet<string>): Promise<boolean>
  /**
   * Before a slot's output is committed: whether to commit it. PostgreSQL records the run here,
   * the fence checked in the same statement: false when the lease was lost or the slot already ran
   * (the output is then dropped).
   */
  commit(job: string, slotMs: number): Promise<boolean>
}
