// The alert journal read back at start, and the compact snapshot of it that spares a start the
// whole read: `alert-index.json` holds every group without its alert context (a ContextRef says
// where that is) and the journal lengths it covers, so a start reads only the journal lines past
// them. A snapshot that is missing, damaged or covers journals the checkpoint no longer has is
// ignored: the journals are read whole, as before (docs/decisions.md, "Alerts in bounded memory").
import { createHash } from 'node:crypto'
import { open, readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'
import type { Logger } from '../log.js'
import type { ContextRef, Group } from './grouping.js'

/** The snapshot's file name in `detections/` (not `.ndjson`: the checkpoint's cut leaves it alone). */
export const INDEX_FILE = 'alert-index.json'

/** What the snapshot covers: journal file → length, and how many journal lines that is. */
export interface IndexCover {
  journals: Record<string, number>
  lines: number
}

interface Header extends IndexCover {
  version: 1
  count: number
  sha256: string
}

const BLOCK = 1 << 20

/** The complete lines of `file` in [from, to), each with its byte offset and length. */
export async function* linesAt(
  file: string,
  from: number,
  to: number,
): AsyncGenerator<{ offset: number; length: number; text: string }> {
  const fh = await open(file, 'r')
  try {
    let pos = from
    let size = BLOCK
    while (pos < to) {
      const want = Math.min(size, to - pos)
      const buf = Buffer.allocUnsafe(want)
      let got = 0
      while (got < want) {
        const { bytesRead } = await fh.read(buf, got, want - got, pos + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      const end = buf.subarray(0, got).lastIndexOf(10) + 1
      if (end === 0) {
        if (got < want) return // shorter than committed (the store logs it at start)
        size *= 2
        continue
      }
      let start = 0
      while (start < end) {
        const nl = buf.indexOf(10, start)
        if (nl > start) yield { offset: pos + start, length: nl - start, text: buf.toString('utf8', start, nl) }
        start = nl + 1
      }
      pos += end
    }
  } finally {
    await fh.close()
  }
}

/** A journal line as a compact group: a context written inline (older journals, compaction) becomes a ref to the line. */
function compact(g: Group, rel: string, offset: number, length: number): Group {
  if (g.contextAt === undefined && g.alertContext) g.contextAt = { file: rel, offset, length }
  g.alertContext = null
  return g
}

async function readIndex(root: string, logger: Logger): Promise<{ cover: IndexCover; groups: Group[] } | null> {
  let text: string
  try {
    text = await readFile(path.join(root, INDEX_FILE), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  try {
    const nl = text.indexOf('\n')
    const head = JSON.parse(text.slice(0, nl)) as Header
    const body = text.slice(nl + 1)
    if (head.version !== 1 || createHash('sha256').update(body).digest('hex') !== head.sha256)
      throw new Error('checksum mismatch')
    const groups =
      body === ''
        ? []
        : body
            .slice(0, -1)
            .split('\n')
            .map((l) => JSON.parse(l) as Group)
    if (groups.length !== head.count) throw new Error('count mismatch')
    return { cover: { journals: head.journals, lines: head.lines }, groups }
  } catch (err) {
    logger.warn({ err }, 'the alert index snapshot is damaged: reading the alert journal whole')
    return null
  }
}

/**
 * The groups as the journals (each cut to its committed length) leave them: the snapshot's, then
 * the lines past what it covers; every journal whole when the snapshot is missing, damaged or stale.
 */
export async function loadAlertJournal(
  root: string,
  journals: ReadonlyArray<{ rel: string; length: number }>,
  logger: Logger,
): Promise<{ groups: Map<string, Group>; lines: number; tailLines: number }> {
  const byId = new Map<string, Group>()
  let index = await readIndex(root, logger)
  const committed = new Map(journals.map((j) => [j.rel, j.length]))
  if (index && Object.entries(index.cover.journals).some(([rel, n]) => (committed.get(rel) ?? -1) < n)) {
    logger.info('the alert index snapshot covers journals no longer committed: reading the alert journal whole')
    index = null
  }
  for (const g of index?.groups ?? []) byId.set(g.id, compact(g, '', 0, 0))
  let tailLines = 0
  for (const { rel, length } of journals) {
    for await (const line of linesAt(path.join(root, rel), index?.cover.journals[rel] ?? 0, length)) {
      const g = compact(JSON.parse(line.text) as Group, rel, line.offset, line.length)
      byId.set(g.id, g)
      tailLines++
    }
  }
  return { groups: byId, lines: (index?.cover.lines ?? 0) + tailLines, tailLines }
}

/** A group's journal or snapshot line: everything but the alert context (which `contextAt` locates). */
export const groupLine = (g: Group) => JSON.stringify({ ...g, alertContext: undefined })

/** Writes the snapshot of `groups` (each with its `contextAt`), covering `cover`; durable, all or nothing. */
export async function writeAlertIndex(root: string, cover: IndexCover, groups: Iterable<Group>): Promise<number> {
  const lines: string[] = []
  for (const g of groups) lines.push(`${groupLine(g)}\n`)
  const body = lines.join('')
  const head: Header = {
    version: 1,
    ...cover,
    count: lines.length,
    sha256: createHash('sha256').update(body).digest('hex'),
  }
  const text = `${JSON.stringify(head)}\n${body}`
  await writeFileDurable(path.join(root, INDEX_FILE), text)
  return text.length
}

/** The alert context stored at `ref` (a line whose `alertContext` it is). */
export async function readContextAt(root: string, ref: ContextRef): Promise<Record<string, unknown>> {
  const fh = await open(path.join(root, ref.file), 'r')
  try {
    const buf = Buffer.alloc(ref.length)
    let got = 0
    while (got < ref.length) {
      const { bytesRead } = await fh.read(buf, got, ref.length - got, ref.offset + got)
      if (bytesRead === 0) throw new Error(`the alert context at ${ref.file}:${ref.offset} is cut short`)
      got += bytesRead
    }
    const line = JSON.parse(buf.toString('utf8')) as { alertContext?: unknown }
    const c = line.alertContext
    return typeof c === 'object' && c !== null ? (c as Record<string, unknown>) : {}
  } finally {
    await fh.close()
  }
}
