// The write plan: what one API write changes in the repository, checked against the draft index of
// the batch it belongs to (the If-Match / If-None-Match precondition, ids unique ignoring case, a
// free file name, the kind of an existing rule), and how the draft follows those changes. Pure planning: it reads the repository and the
// batch's objects but commits nothing (rule-writer.ts does, see docs/architecture.md).
import path from 'node:path'
import { conflict, notFound } from '../errors.js'
import type { EngineRegistry } from '../engine/engine.js'
import { kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { isYamlPath, newRulePaths, pythonPathFor } from '../rules/paths.js'
import { foldId } from '../rules/rule-id.js'
import { renderRuleFile } from '../rules/rule-render.js'
import type { IndexDraft, IndexedRule } from '../rules/rule-index.js'
import { unwrapObject } from '../git/hash-object.js'
import type { GitRepository } from '../git/repository.js'
import type { ObjectBatch } from '../git/write-object-loose.js'
import type { FileChanges } from '../git/tree-edit.js'
import { ruleEtag, preconditionProblem, type Precondition } from './etag.js'
import { buildFileRecord, ownersOfPython } from './file-records.js'
import type { Actor } from './history.js'
import { draftContext } from './revision-sync.js'
import { formatTrailers } from './trailers.js'

export interface WriteActor extends Actor {
  /** Shown as the commit author's name. */
  name: string
  email: string
}

interface WriteCommon {
  kind: RuleKind
  id: string
  actor: WriteActor
  requestId: string
  reason?: string
  /** If-Match / If-None-Match, judged against the tree this write commits on. */
  precondition?: Precondition
}

export type WriteOp =
  | (WriteCommon & { type: 'create' | 'replace'; data: Record<string, unknown>; pythonSource?: string })
  | (WriteCommon & { type: 'delete' })
  /** The rule's files, byte for byte, as they were at `revision` (paths and contents). */
  | (WriteCommon & { type: 'restore'; revision: string; files: ReadonlyMap<string, Buffer> })

export type WriteOutcome = {
  status: 'created' | 'updated' | 'unchanged' | 'deleted'
  commit: string | null
  /** The rule as this write left it (a later write of the same batch may change it again). */
  rule?: IndexedRule
  /** The rule's ETag in the tree this write left (absent once deleted). */
  etag?: string
}

export interface PlannedWrite {
  verb: string
  status: WriteOutcome['status']
  changes: FileChanges
}

function holderLabel(draft: IndexDraft, id: string): string | undefined {
  for (const p of draft.holdersOf(id)) {
    const f = draft.getFile(p)
    if (f?.kind) return `a ${f.kind} rule (${p})`
    if (f) return `a ${f.analysisType ?? 'analysis'} file (${p})`
  }
  return undefined
}

export function commitMessage(verb: string, op: WriteOp): string {
  const reason = (op.reason ?? '').replace(/\r\n?/g, '\n').replace(/\0/g, '').trim()
  // Every value must be one line (formatTrailers throws otherwise): the id was checked on the way in.
  const trailers = formatTrailers([
    ['Rule-Id', op.id],
    ['Rule-Kind', op.kind],
    ['Actor-Id', op.actor.id],
    ['Actor-Type', op.actor.type],
    ['Request-Id', op.requestId],
    ...(op.type === 'restore' ? [['Restored-From', op.revision] as const] : []),
  ])
  return `${verb} ${op.kind} rule ${op.id}\n\n${reason ? `${reason}\n\n` : ''}${trailers}\n`
}

/** The file changes of one write against the draft, or null when it changes nothing. */
export async function planWrite(
  repo: GitRepository,
  op: WriteOp,
  draft: IndexDraft,
  tree: string | null,
  objects: ObjectBatch,
): Promise<PlannedWrite | null> {
  const existing: IndexedRule | undefined = draft.ruleById(op.id)
  const holder = holderLabel(draft, op.id)
  if (op.precondition) {
    const mine = existing?.kind === op.kind ? existing : undefined
    const current = mine ? await ruleEtag(repo, tree, mine) : undefined
    const problem = preconditionProblem(op.precondition, current, `${op.kind} rule ${op.id}`)
    if (problem) throw problem
  }
  if (op.type === 'restore') return planRestore(repo, op, draft, tree, objects, existing, holder)
  if (op.type === 'delete') {
    if (!existing || existing.kind !== op.kind) throw notFound(`${op.kind} rule ${op.id} not found`)
    const changes: FileChanges = new Map([[existing.path, null]])
    if (existing.pythonPath) changes.set(existing.pythonPath, null)
    return { verb: 'Delete', status: 'deleted', changes }
  }
  if (op.type === 'create' && holder) throw conflict(`id ${op.id} already exists: ${holder}`)
  if (holder && (!existing || existing.kind !== op.kind)) throw conflict(`id ${op.id} belongs to ${holder}`)
  const twin = holder ? undefined : draft.caseTwinOf(op.id)
  if (twin !== undefined)
    throw conflict(
      `id ${op.id} differs only by case from the existing id ${twin}, ${holderLabel(draft, twin) ?? 'in the repository'}; ids are unique ignoring case`,
    )
  // The kind's companion file (a scheduled rule's `.py`), named by `companion.fileKey` in the YAML.
  const companion = kindDef(op.kind).companion
  if (existing) {
    const oldYaml = await repo.blobAt(tree, existing.path)
    const oldText = oldYaml ? (await readBlobOf(repo, objects, oldYaml)).toString('utf8') : undefined
    const data = { ...op.data }
    if (companion)
      data[companion.fileKey] = existing.file.data[companion.fileKey] ?? path.posix.basename(existing.pythonPath ?? '')
    const text = renderRuleFile(op.kind, companionFirst(data, companion?.fileKey), oldText)
    const changes: FileChanges = new Map()
    if (text !== oldText) changes.set(existing.path, Buffer.from(text))
    if (companion) {
      const py = existing.pythonPath ?? pythonPathFor(existing.path, String(data[companion.fileKey]))
      if ((op.pythonSource ?? '') !== (existing.file.pythonSource ?? ''))
        changes.set(py, Buffer.from(op.pythonSource ?? ''))
    }
    if (changes.size === 0) return null
    return { verb: 'Update', status: 'updated', changes }
  }
  let yamlPath: string | undefined
  for (const candidate of newRulePaths(op.kind, op.id)) {
    const py = companion ? pythonPathFor(candidate) : undefined
    // Taken also when an existing path differs only by case: both could not live in one clone.
    const taken = async (p: string) =>
      draft.getFile(p) !== undefined || (await repo.pathsLike(tree, p, foldId)).length > 0
    if (!(await taken(candidate)) && !(py && (await taken(py)))) {
      yamlPath = candidate
      break
    }
  }
  if (!yamlPath) throw conflict(`no free file name for id ${op.id}`)
  const changes: FileChanges = new Map()
  const data = { ...op.data }
  if (companion) {
    const py = pythonPathFor(yamlPath)
    data[companion.fileKey] = path.posix.basename(py)
    changes.set(py, Buffer.from(op.pythonSource ?? ''))
  }
  changes.set(yamlPath, Buffer.from(renderRuleFile(op.kind, companionFirst(data, companion?.fileKey))))
  return { verb: 'Create', status: 'created', changes }
}

/**
 * A restore: the rule's current files go, the files of the old revision come back at their old paths,
 * byte for byte (a moved rule moves back). Refused when those paths now hold another rule's files.
 */
async function planRestore(
  repo: GitRepository,
  op: Extract<WriteOp, { type: 'restore' }>,
  draft: IndexDraft,
  tree: string | null,
  objects: ObjectBatch,
  existing: IndexedRule | undefined,
  holder: string | undefined,
): Promise<PlannedWrite | null> {
  if (holder && (!existing || existing.kind !== op.kind)) throw conflict(`id ${op.id} belongs to ${holder}`)
  const twin = holder ? undefined : draft.caseTwinOf(op.id)
  if (twin !== undefined)
    throw conflict(`id ${op.id} differs only by case from the existing id ${twin}; ids are unique ignoring case`)
  const mine = new Set([existing?.path, existing?.pythonPath].filter((p): p is string => p !== undefined))
  const changes: FileChanges = new Map()
  for (const p of mine) changes.set(p, null)
  for (const [p, content] of op.files) {
    if (!mine.has(p)) {
      const other = draft.getFile(p)
      if (other && other.id !== op.id) throw conflict(`cannot restore ${p}: it now holds ${other.id ?? 'another file'}`)
      const owners = p.endsWith('.py') ? ownersOfPython(draft.allFiles(), p).filter((y) => !op.files.has(y)) : []
      if (owners.length > 0) throw conflict(`cannot restore ${p}: it is now the module of ${owners.join(', ')}`)
    }
    changes.set(p, content)
  }
  // Only what differs from the tree is written: restoring the current version commits nothing.
  for (const [p, content] of [...changes]) {
    const oid = await repo.blobAt(tree, p)
    if (content === null ? oid === null : oid !== null && (await readBlobOf(repo, objects, oid)).equals(content))
      changes.delete(p)
  }
  if (changes.size === 0) return null
  return { verb: 'Restore', status: existing ? 'updated' : 'created', changes }
}

/**
 * A file of the tree a write left, or undefined when it holds none: from the batch when that write
 * (or an earlier one of the same batch) made it, not on disk yet.
 */
export function treeReader(
  repo: GitRepository,
  objects: ObjectBatch,
  tree: string | null,
): (p: string) => Promise<string | undefined> {
  return async (p) => {
    const oid = await repo.blobAt(tree, p)
    return oid === null ? undefined : (await readBlobOf(repo, objects, oid)).toString('utf8')
  }
}

/**
 * Brings the draft up to the planned changes: the YAML files among them re-read, and so is every
 * YAML file naming a changed .py (a rule whose code alone changed), read through `readTreeFile`
 * from the tree the write left.
 */
export async function applyToDraft(
  draft: IndexDraft,
  changes: FileChanges,
  engines: EngineRegistry,
  readTreeFile: (p: string) => Promise<string | undefined>,
): Promise<void> {
  const texts = new Map([...changes].map(([p, c]) => [p, c === null ? undefined : c.toString('utf8')]))
  const src = {
    engines,
    ctx: draftContext(draft),
    readFile: async (p: string) => {
      if (texts.has(p)) return texts.get(p)
      // An unchanged .py beside a changed YAML: its source is the one the draft already holds.
      for (const yamlPath of changes.keys()) {
        const rule = draft.getFile(yamlPath)?.rule
        if (rule?.pythonPath === p) return rule.file.pythonSource
      }
      return readTreeFile(p)
    },
  }
  // The trees the commit rewrote (every folder on a changed path) lost their badly named entries.
  const rewritten = new Set([''])
  for (const p of changes.keys())
    for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) rewritten.add(p.slice(0, i))
  for (const f of [...draft.allFiles()])
    if (f.badNameIn !== undefined && rewritten.has(f.badNameIn)) draft.removeFile(f.path)
  // The YAML files to re-read: the changed ones, then those left as they are whose .py changed.
  const reread = new Map<string, string | undefined>()
  for (const p of changes.keys()) if (isYamlPath(p)) reread.set(p, texts.get(p))
  for (const p of changes.keys()) {
    if (!p.endsWith('.py')) continue
    for (const owner of ownersOfPython(draft.allFiles(), p))
      if (!reread.has(owner)) reread.set(owner, await readTreeFile(owner))
  }
  for (const [p, text] of reread) {
    if (text === undefined) {
      draft.removeFile(p)
      continue
    }
    const rec = await buildFileRecord(p, text, src, draft.getFile(p))
    if (rec) draft.putFile(rec)
  }
}

/** A blob's content: from the batch when an earlier write of the same batch made it (not on disk yet). */
async function readBlobOf(repo: GitRepository, objects: ObjectBatch, oid: string): Promise<Buffer> {
  const raw = objects.objects.get(oid)
  return raw ? unwrapObject(raw).content : repo.readBlob(oid)
}

/** The companion's key (`Filename`) goes right after `AnalysisType` in files the service writes. */
function companionFirst(data: Record<string, unknown>, key: string | undefined): Record<string, unknown> {
  if (!key || !(key in data)) return data
  const { AnalysisType, [key]: named, ...rest } = data
  return { AnalysisType, [key]: named, ...rest }
}
