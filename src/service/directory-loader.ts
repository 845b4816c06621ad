// Loads a rules repository from a directory on disk (a checkout), exactly as the service reads a
// revision: every YAML file (typed by AnalysisType, or recorded as not an analysis file), nested
// folders, the folders a tree walk skips, the .py beside scheduled rules and globals. For the CLI.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import { inLoadOrder } from '../rules/kinds/index.js'
import { skipFolder } from '../git/tree-diff.js'
import { isYamlPath } from '../rules/paths.js'
import { RuleIndex } from '../rules/rule-index.js'
import { buildFileRecord } from './file-records.js'
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

/** `ignore`: repository paths left out entirely (`--ignore-files`), as if they were not there. */
export async function loadDirectory(
  root: string,
  engines: EngineRegistry,
  ignore: (path: string) => boolean = () => false,
): Promise<RuleIndex> {
  const files = (await walk(root)).filter((p) => isYamlPath(p) && !ignore(p)).sort()
  const draft = RuleIndex.empty().draft()
  const src = {
    engines,
    ctx: draftContext(draft),
    readFile: async (p: string) => fsp.readFile(path.join(root, p), 'utf8').catch(() => undefined),
  }
  // By the kinds' load ranks: correlation rules after the rules they join, so they are checked against them.
  for (const p of inLoadOrder(files)) {
    const text = await fsp.readFile(path.join(root, p), 'utf8')
    const rec = await buildFileRecord(p, text, src)
    if (rec) draft.putFile(rec)
  }
  return draft.publish(null)
}
