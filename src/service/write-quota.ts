// The repository's limits on API writes (rules.maxRepositoryBytes, rules.maxRules): each write of a
// batch is measured before its commit is built — the bytes it adds or removes against the tree it
// commits on, the rule it creates or deletes — and refused with a 409 QuotaExceeded when it would
// take the repository past a limit. A write that shrinks the repository is always admitted.
import { RulekeeperError } from '../errors.js'
import { unwrapObject } from '../git/hash-object.js'
import type { GitRepository } from '../git/repository.js'
import type { ObjectBatch } from '../git/write-object-loose.js'
import {
  DEFAULT_BOUNDS,
  fmtBytes,
  usageOf,
  type RepositoryBounds,
  type RepositoryUsage,
} from '../rules/repository-bounds.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { PlannedWrite } from './write-plan.js'

export type { RepositoryBounds }

export interface WriteQuota {
  /** Counts the write in, or throws QuotaExceeded (the usage is then left as it was). */
  admit(repo: GitRepository, tree: string | null, objects: ObjectBatch, planned: PlannedWrite): Promise<void>
}

async function sizeAt(repo: GitRepository, tree: string | null, objects: ObjectBatch, p: string): Promise<number> {
  const oid = await repo.blobAt(tree, p)
  if (!oid) return 0
  const raw = objects.objects.get(oid)
  return raw ? unwrapObject(raw).content.length : repo.blobSize(oid)
}

/** The quota of one write batch, starting from the published index it builds on. */
export function checkWriteQuota(base: RuleIndex, bounds: RepositoryBounds = DEFAULT_BOUNDS): WriteQuota {
  const usage: RepositoryUsage = usageOf(base.files.values(), base.rules.size)
  return {
    async admit(repo, tree, objects, planned) {
      let bytes = 0
      for (const [p, content] of planned.changes)
        bytes += (content?.length ?? 0) - (await sizeAt(repo, tree, objects, p))
      const rules = planned.status === 'created' ? 1 : planned.status === 'deleted' ? -1 : 0
      if (bytes > 0 && usage.bytes + bytes > bounds.maxRepositoryBytes)
        throw new RulekeeperError(
          'QuotaExceeded',
          `this write would bring the rule files to ${fmtBytes(usage.bytes + bytes)} bytes, over rules.maxRepositoryBytes (${fmtBytes(bounds.maxRepositoryBytes)} bytes); nothing was written — delete or shrink rules first`,
        )
      if (rules > 0 && usage.rules + rules > bounds.maxRules)
        throw new RulekeeperError(
          'QuotaExceeded',
          `the repository already has ${fmtBytes(usage.rules)} rules, the most rules.maxRules allows (${fmtBytes(bounds.maxRules)}); nothing was written — delete rules first`,
        )
      usage.bytes += bytes
      usage.rules += rules
    },
  }
}
