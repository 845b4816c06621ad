// Loads a rules repository from a directory on disk (a checkout), exactly as the service reads a
// revision: every YAML file (typed by AnalysisType, or recorded as not an analysis file), nested
// folders, the folders a tree walk skips, the .py beside scheduled rules and globals, every Python
// module compiled and imported (python-check.ts). For the CLI.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import { inLoadOrder } from '../rules/kinds/index.js'
import { skipFolder } from '../git/tree-diff.js'
import { isYamlPath } from '../rules/paths.js'
import { RuleIndex } from '../rules/rule-index.js'
import { buildFileRecord } from './file-records.js'
import { checkDraftPython } from './python-check.js'
import { draftContext } from './revision-sync.js'

async function walk(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  for (const e of await fsp.readdir(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name
    // The folders a revision's tree walk skips (git/tree-diff.ts), so a checkout reads as the server reads it.
    if (e.isDirectory()) {
      if (!skipFolder(e.name)) out.push(...(await walk(root, r)))
    } else if (e.isFile()) out.push(r)
  }
  return out
}

/**
 * Reads files ahead of the loop that awaits them one by one (a read is a round trip through the
 * thread pool: one at a time, 1,800 files of 900 Python rules kept `rulekeeper test` waiting on I/O
 * for over a second). `order` is the expected order of reads; at most `window` are in flight or
 * waiting, and a file read ahead but never asked for is dropped once the loop has passed it.
 */
class ReadAhead {
  private readonly ahead = new Map<string, Promise<string>>()
  private readonly position = new Map<string, number>()
  private next = 0
  private passed = 0

  constructor(
    private readonly root: string,
    private readonly order: string[],
    private readonly window = 64,
  ) {
    for (const [i, p] of order.entries()) this.position.set(p, i)
  }

  /** The file's text; rejects as fsp.readFile does. */
  read(p: string): Promise<string> {
    const at = this.position.get(p)
    if (at !== undefined && at >= this.passed) {
      for (; this.passed < at; this.passed++) this.ahead.delete(this.order[this.passed]!)
      this.passed = at + 1
    }
    const hit = this.ahead.get(p)
    this.ahead.delete(p)
    this.fill()
    return hit ?? fsp.readFile(path.join(this.root, p), 'utf8')
  }

  private fill(): void {
    this.next = Math.max(this.next, this.passed)
    while (this.next < this.order.length && this.next < this.passed + this.window) {
      const p = this.order[this.next++]!
      if (this.ahead.has(p)) continue
      const text = fsp.readFile(path.join(this.root, p), 'utf8')
      text.catch(() => {}) // a file never asked for must not be an unhandled rejection
      this.ahead.set(p, text)
    }
  }
}

/** `ignore`: repository paths left out entirely (`--ignore-files`), as if they were not there. */
export async function loadDirectory(
  root: string,
  engines: EngineRegistry,
  ignore: (path: string) => boolean = () => false,
): Promise<RuleIndex> {
  const all = await walk(root)
  const files = all.filter((p) => isYamlPath(p) && !ignore(p)).sort()
  const draft = RuleIndex.empty().draft()
  // By the kinds' load ranks: correlation rules after the rules they join, so they are checked against them.
  const ordered = inLoadOrder(files)
  // Each YAML file, then the .py of the same name beside it (where a rule's Filename usually points).
  const present = new Set(all)
  const readOrder = ordered.flatMap((p) => {
    const py = p.replace(/\.ya?ml$/i, '.py')
    return present.has(py) ? [p, py] : [p]
  })
  const reader = new ReadAhead(root, readOrder)
  const src = {
    engines,
    ctx: draftContext(draft),
    readFile: async (p: string) => reader.read(p).catch(() => undefined),
  }
  for (const p of ordered) {
    const text = await reader.read(p)
    const rec = await buildFileRecord(p, text, src)
    if (rec) draft.putFile(rec)
  }
  // Every Python module compiled and imported in one sandboxed run, as the server checks a revision.
  await checkDraftPython(draft, {
    reread: ordered,
    engines,
    ctx: src.ctx,
    // Every file was read just now: there is nothing more to read.
    rereadMore: async () => [],
  })
  return draft.publish(null)
}
