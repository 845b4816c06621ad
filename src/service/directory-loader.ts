// Loads a rules repository from a directory on disk (a checkout), exactly as the service reads a
// revision: every YAML file (typed by AnalysisType, or recorded as not an analysis file), nested
// folders, the folders a tree walk skips, the .py beside scheduled rules and globals, every Python
// module compiled and imported (python-check.ts). For the CLI. A file over rules.maxFileBytes is
// sized (stat), never read: invalid with that reason, as the server reports it.
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
import { RulekeeperError } from '../errors.js'
import { DEFAULT_BOUNDS, fileTooLarge } from '../rules/repository-bounds.js'

/** A file's text, or its size when it is over the limit (not read). */
type Content = string | { tooLarge: number }

async function readBounded(file: string, max: number): Promise<Content> {
  const { size } = await fsp.stat(file)
  return size > max ? { tooLarge: size } : fsp.readFile(file, 'utf8')
}

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
  private readonly ahead = new Map<string, Promise<Content>>()
  private readonly position = new Map<string, number>()
  private next = 0
  private passed = 0

  constructor(
    private readonly root: string,
    private readonly order: string[],
    private readonly max: number,
    private readonly window = 64,
  ) {
    for (const [i, p] of order.entries()) this.position.set(p, i)
  }

  /** The file's text (or its size when over the limit); rejects as fsp.readFile does. */
  read(p: string): Promise<Content> {
    const at = this.position.get(p)
    if (at !== undefined && at >= this.passed) {
      for (; this.passed < at; this.passed++) this.ahead.delete(this.order[this.passed]!)
      this.passed = at + 1
    }
    const hit = this.ahead.get(p)
    this.ahead.delete(p)
    this.fill()
    return hit ?? readBounded(path.join(this.root, p), this.max)
  }

  private fill(): void {
    this.next = Math.max(this.next, this.passed)
    while (this.next < this.order.length && this.next < this.passed + this.window) {
      const p = this.order[this.next++]!
      if (this.ahead.has(p)) continue
      const text = readBounded(path.join(this.root, p), this.max)
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
  maxFileBytes = DEFAULT_BOUNDS.maxFileBytes,
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
  const reader = new ReadAhead(root, readOrder, maxFileBytes)
  const src = {
    engines,
    ctx: draftContext(draft),
    readFile: async (p: string) => {
      const content = await reader.read(p).catch(() => undefined)
      if (typeof content !== 'object') return content
      throw new RulekeeperError('PayloadTooLarge', fileTooLarge(content.tooLarge, maxFileBytes, p).message)
    },
  }
  for (const p of ordered) {
    const text = await reader.read(p)
    if (typeof text === 'object') {
      draft.putFile({ path: p, errors: [fileTooLarge(text.tooLarge, maxFileBytes)], bytes: text.tooLarge })
      continue
    }
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
