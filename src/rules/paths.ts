// Where a new rule's files go: `<kind folder>/<group>/<file>.yml` with the group the id's first
// dot-separated segment in lower case, both sanitized to [A-Za-z0-9._-]; a clash with an existing
// file gets a short hash of the id. Every path is checked to stay inside the repository tree, and
// new paths never use a name Windows reserves (CON, NUL, COM1, … get a `_`; docs/decisions.md).
import { createHash } from 'node:crypto'
import path from 'node:path'
import { kindDef } from './kinds/index.js'
import type { RuleKind } from './model.js'

/**
 * Names Windows reserves for devices, in any case, alone or before an extension (`nul.yml`): a
 * clone on Windows cannot hold a file or folder so named.
 */
const WINDOWS_RESERVED = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?=\.|$)/i

function sanitizeSegment(s: string): string {
  const out = s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_')
  if (out === '') return '_'
  // A reserved stem gets a `_` (`CON` → `CON_`, `nul.yml` → `nul_.yml`): the id itself is kept.
  return out.replace(WINDOWS_RESERVED, (stem) => `${stem}_`)
}

/** Whether a path segment is safe on every file system people clone to (not reserved, no trailing dot or space). */
function isPortableSegment(seg: string): boolean {
  return !WINDOWS_RESERVED.test(seg) && !/[. ]$/.test(seg)
}

function shortIdHash(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 8)
}

/** Candidate YAML paths for a new rule, best first (the plain one, then the hashed one). */
export function newRulePaths(kind: RuleKind, id: string): string[] {
  const group = sanitizeSegment((id.split('.')[0] ?? '').toLowerCase())
  const file = sanitizeSegment(id)
  const dir = `${kindDef(kind).folder}/${group}`
  // Keep file names within common file-system limits (255 bytes) even for 255-character ids.
  const base = file.length > 200 ? `${file.slice(0, 200)}_${shortIdHash(id)}` : file
  return [`${dir}/${base}.yml`, `${dir}/${base}_${shortIdHash(id)}.yml`].map((p) => {
    if (!p.split('/').every(isPortableSegment)) throw new Error(`path ${JSON.stringify(p)} is not portable`)
    return assertInsideRepo(p)
  })
}

/** The `.py` beside a YAML file: a scheduled rule's companion (rules/kinds/), a global's module. */
export function pythonPathFor(yamlPath: string, filename?: string): string {
  const dir = path.posix.dirname(yamlPath)
  const name = filename ?? `${path.posix.basename(yamlPath).replace(/\.ya?ml$/, '')}.py`
  return assertInsideRepo(dir === '.' ? name : `${dir}/${name}`)
}

/** Rejects absolute paths, `..` segments and empty segments: nothing may land outside the tree. */
function assertInsideRepo(p: string): string {
  const norm = path.posix.normalize(p)
  if (
    norm !== p ||
    p.startsWith('/') ||
    p.split('/').some((s) => s === '' || s === '..' || s === '.' || s === '.git')
  ) {
    throw new Error(`path ${JSON.stringify(p)} is outside the repository tree`)
  }
  return p
}

export const isYamlPath = (p: string) => /\.ya?ml$/i.test(p)
