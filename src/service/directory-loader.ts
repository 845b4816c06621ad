// Loads a rules repository from a directory on disk (a checkout), exactly as the service reads a
// revision: every YAML analysis file typed by AnalysisType, nested folders, hidden folders and
// __pycache__ skipped, the .py beside scheduled rules and globals. Used by `test` and `validate`.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import { inLoadOrder } from '../rules/kinds/index.js'
import { isYamlPath } from '../rules/paths.js'
import { RuleIndex } from '../rules/rule-index.js'
import { buildFileRecord } from './file-records.js'
import { draftContext } from './revision-sync.js'

async function walk(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  for (const e of await fsp.readdir(path.join(root, rel), { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.name === '__pycache__' || e.name === 'node_modules') continue
    const r = rel ? `${rel}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...(await walk(root, r)))
    else if (e.isFile()) out.push(r)
  }
  return out
}

export async function loadDirectory(root: string, engines: EngineRegistry): Promise<RuleIndex> {
  const files = (await walk(root)).filter(isYamlPath).sort()
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
