// Plans kept for reading by id: one JSON file each under `<data dir>/plans/`, written durably; the
// newest `keep` stay (the oldest are removed when one more is written). Ids are random, so a plan is
// found only by whoever was given its id (or its link).
import { randomBytes } from 'node:crypto'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'
import type { Plan } from './plan.js'

const ID = /^plan_[0-9a-f]{24}$/

/** A new plan id: random, so a plan is found only through its id. */
export function newPlanId(): string {
  return `plan_${randomBytes(12).toString('hex')}`
}

export class PlanStore {
  constructor(
    private readonly dir: string,
    private readonly keep = 500,
  ) {}

  async save(plan: Plan): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 })
    await writeFileDurable(path.join(this.dir, `${plan.id}.json`), JSON.stringify(plan))
    await this.prune()
  }

  /** The plan of that id, or null (an id of another shape is never a file name). */
  async get(id: string): Promise<Plan | null> {
    if (!ID.test(id)) return null
    try {
      return JSON.parse(await fsp.readFile(path.join(this.dir, `${id}.json`), 'utf8')) as Plan
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  private async prune(): Promise<void> {
    const names = (await fsp.readdir(this.dir)).filter((n) => ID.test(n.replace(/\.json$/, '')))
    if (names.length <= this.keep) return
    const aged = await Promise.all(
      names.map(async (n) => ({ n, at: (await fsp.stat(path.join(this.dir, n)).catch(() => null))?.mtimeMs ?? 0 })),
    )
    aged.sort((a, b) => a.at - b.at)
    for (const { n } of aged.slice(0, names.length - this.keep)) await fsp.rm(path.join(this.dir, n), { force: true })
  }
}
