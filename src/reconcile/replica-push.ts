// Pushes across replicas (with `state.postgres`): a revision this replica publishes that it did not
// hear of from the others (its own write, a webhook's reconcile, its own poll) is announced on the
// revision channel (state/revision-notify.ts); an announced revision this replica does not serve
// triggers its reconciler (fetch and follow, as the webhook does), and so does every (re)connect of
// the channel, since what was announced while it was away is lost.
import type { Logger } from '../log.js'
import type { RuleCatalog } from '../service/catalog.js'
import { RevisionChannel } from '../state/revision-notify.js'
import type { Reconciler } from './reconciler.js'

export interface ReplicaPushOptions {
  catalog: Pick<RuleCatalog, 'index' | 'onPublish'>
  reconciler: Pick<Reconciler, 'trigger'>
  logger: Logger
}

/** Revisions heard from the channel that are remembered, so that following one does not announce it again. */
const HEARD = 32

export interface ReplicaPush {
  channel: RevisionChannel
  close(): Promise<void>
}

/** Starts the pushes when the state store is PostgreSQL (else nothing); answers what stops them. */
export async function startReplicaPush(
  state: { postgres: { url: string } | null },
  o: ReplicaPushOptions,
): Promise<() => Promise<void>> {
  if (!state.postgres) return async () => {}
  const push = await replicaPush(state.postgres.url, o)
  return () => push.close()
}

export async function replicaPush(url: string, o: ReplicaPushOptions): Promise<ReplicaPush> {
  const heard: string[] = []
  const reconcile = (why: string) =>
    void o.reconciler.trigger().catch((err: unknown) => o.logger.warn({ err, why }, 'reconcile after a push failed'))
  const channel = new RevisionChannel({
    url,
    logger: o.logger,
    onRevision: (revision) => {
      if (revision === o.catalog.index.revision) return
      if (!heard.includes(revision)) heard.push(revision)
      if (heard.length > HEARD) heard.shift()
      reconcile('announced')
    },
    onConnect: () => reconcile('connected'),
  })
  const unsubscribe = o.catalog.onPublish((index) => {
    const revision = index.revision
    if (revision && !heard.includes(revision)) void channel.announce(revision)
  })
  await channel.start()
  return {
    channel,
    close: async () => {
      unsubscribe()
      await channel.close()
    },
  }
}
