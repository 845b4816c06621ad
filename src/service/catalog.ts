// The published catalog: the index of one commit that every read is served from, the
// history metadata beside it, and the one lane (`exclusive`) through which every change of the
// index goes: a write batch (rule-writer.ts) or following a new revision (follower.ts). It depends
// on nothing but its own caches; whoever changes the index calls `publish`.
import path from 'node:path'
import { verifySshSignature } from '../git/sshsig.js'
import type { Logger } from '../log.js'
import { RuleIndex } from '../rules/rule-index.js'
import { HistoryTracker } from './history.js'
import { IndexPersistence } from './index-snapshot.js'
import type { ServiceCommits } from './service-commits.js'

export interface CatalogOptions {
  /** Where the history metadata and the persisted index are kept (none: in memory only). */
  cacheDir: string | null
  /** The engines the index was built with (a persisted index built with others is not trusted). */
  engineKinds: readonly string[]
  logger: Logger
  /** The commits the service made: their actor trailers are believed, no other commit's. */
  serviceCommits: Pick<ServiceCommits, 'has'>
  /** The public key (wire blob) of the service's signing key: a commit it signed is the service's too. */
  serviceKey?: Buffer | null
}

export class RuleCatalog {
  private current: RuleIndex = RuleIndex.empty()
  readonly history: HistoryTracker
  private exclusiveTail: Promise<unknown> = Promise.resolve()
  private readonly persisted: IndexPersistence | null
  private readonly published = new Set<(index: RuleIndex) => void>()

  constructor(o: CatalogOptions) {
    const key = o.serviceKey ?? null
    this.history = new HistoryTracker(
      o.cacheDir ? path.join(o.cacheDir, 'history.json') : null,
      (c) =>
        o.serviceCommits.has(c.oid) ||
        (key !== null &&
          c.signature !== undefined &&
          verifySshSignature(c.signature.armored, c.signature.payload, key)),
    )
    this.persisted = o.cacheDir
      ? new IndexPersistence(path.join(o.cacheDir, 'index.ndjson'), [...o.engineKinds], o.logger)
      : null
  }

  /** The index reads are served from (replaced only by `publish`). */
  get index(): RuleIndex {
    return this.current
  }

  /** Loads the history cache and the persisted index, when there are usable ones. */
  async load(repo: { hasCommit(oid: string): Promise<boolean> }): Promise<void> {
    await this.history.loadCache()
    const persisted = await this.persisted?.load(repo)
    if (persisted) this.current = persisted
  }

  /** Runs `fn` with no write batch or remote pull in progress (they all go through here). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.exclusiveTail.then(fn, fn)
    this.exclusiveTail = run.catch(() => undefined)
    return run
  }

  publish(index: RuleIndex): void {
    const before = this.current.revision
    this.current = index
    this.persisted?.changed(index)
    if (index.revision !== before) for (const fn of this.published) fn(index)
  }

  /** Calls `fn` with each index published for another revision than the one served before (replica pushes). */
  onPublish(fn: (index: RuleIndex) => void): () => void {
    this.published.add(fn)
    return () => this.published.delete(fn)
  }

  /** Saves the persisted index now rather than later (after the expensive full build). */
  saveSoon(): void {
    this.persisted?.saveSoon()
  }

  async close(): Promise<void> {
    await this.history.close()
    await this.persisted?.close(this.current)
  }
}
