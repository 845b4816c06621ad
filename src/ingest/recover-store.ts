// Start-up recovery for one source's files. A crash can leave a torn last line in a file the dead
// process was appending to: its bytes are moved to `_rejected` (a file written whole, then renamed)
// and the data file is cut back to its last complete line, so a torn line is never glued to a good
// one. The same pass reads the recent data files to rebuild the duplicate filter.
import { createReadStream } from 'node:fs'
import { mkdir, open, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { listSorted } from '../dir-list.js'
import { writeFileDurable } from '../durable-file.js'
import type { DuplicateFilter } from './duplicate-filter.js'
import { decodeSurrogateEscape } from './parse-payload.js'

export interface RecoveryReport {
  files: number
  tornTails: Array<{ file: string; offset: number; bytes: number }>
  idsLoaded: number
}

/** Files of this source: data under dt=/hour=, rejected under dt=. */
async function sourceFiles(
  root: string,
  logType: string,
  sourceId: string,
): Promise<{ data: string[]; rejected: string[] }> {
  // The exact writer pattern: a plain prefix test would also take `editor-audit-eu-…` files for a
  // source `editor-audit`. Torn-tail files are written whole (tmp + rename) and need no check.
  const pattern = new RegExp(`^${sourceId}-\\d{8}T\\d{6}Z-[0-9a-f]{6}-\\d{6}\\.ndjson$`)
  const mine = (f: string) => pattern.test(f)
  const data: string[] = []
  const rejected: string[] = []
  const base = path.join(root, logType)
  for (const dt of await listSorted(base)) {
    if (!dt.startsWith('dt=')) continue
    for (const hour of await listSorted(path.join(base, dt))) {
      if (!hour.startsWith('hour=')) continue
      for (const f of await listSorted(path.join(base, dt, hour)))
        if (mine(f)) data.push(path.join(logType, dt, hour, f))
    }
  }
  const rbase = path.join(root, '_rejected', logType)
  for (const dt of await listSorted(rbase)) {
    for (const f of await listSorted(path.join(rbase, dt))) {
      const rel = path.join('_rejected', logType, dt, f)
      if (f.startsWith('.tmp-')) await unlink(path.join(root, rel)).catch(() => {})
      else if (mine(f)) rejected.push(rel)
    }
  }
  return { data, rejected }
}

/** Offset just past the last newline (0 if none), or -1 when the file already ends cleanly. */
async function cleanLength(file: string, size: number): Promise<number> {
  if (size === 0) return -1
  const fh = await open(file, 'r')
  try {
    const buf = Buffer.alloc(64 * 1024)
    let end = size
    let first = true
    while (end > 0) {
      const start = Math.max(0, end - buf.length)
      const { bytesRead } = await fh.read(buf, 0, end - start, start)
      const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a)
      if (first && nl === bytesRead - 1) return -1
      first = false
      if (nl >= 0) return start + nl + 1
      end = start
    }
    return 0
  } finally {
    await fh.close()
  }
}

async function isolateTornTail(
  root: string,
  rel: string,
  size: number,
  keep: number,
  sourceId: string,
  logType: string,
) {
  const abs = path.join(root, rel)
  const fh = await open(abs, 'r+')
  try {
    const tail = Buffer.alloc(size - keep)
    await fh.read(tail, 0, tail.length, keep)
    const now = new Date()
    const dir = path.join(root, '_rejected', logType, `dt=${now.toISOString().slice(0, 10)}`)
    await mkdir(dir, { recursive: true })
    const name = `${sourceId}-torn-${path.basename(rel, '.ndjson')}-${keep}.ndjson`
    const target = path.join(dir, name)
    const exists = await stat(target).then(
      () => true,
      () => false,
    )
    // A crash during an earlier recovery may have written this already; the name makes it idempotent.
    if (!exists) {
      const line = JSON.stringify({
        error: `torn tail: ${tail.length} bytes after the last complete line of ${rel}, left by an interrupted write (never acknowledged)`,
        receivedAt: now.toISOString(),
        sourceId,
        file: rel,
        offset: keep,
        raw: decodeSurrogateEscape(tail),
        rawBase64: tail.toString('base64'),
      })
      await writeFileDurable(target, `${line}\n`, { tmp: path.join(dir, `.tmp-${name}`) })
    }
    await fh.truncate(keep)
    await fh.sync()
  } finally {
    await fh.close()
  }
}

export async function recoverSourceFiles(opts: {
  root: string
  logType: string
  sourceId: string
  filter: DuplicateFilter
  now: number
}): Promise<RecoveryReport> {
  const { root, logType, sourceId, filter, now } = opts
  const { data, rejected } = await sourceFiles(root, logType, sourceId)
  const report: RecoveryReport = { files: data.length + rejected.length, tornTails: [], idsLoaded: 0 }
  const recent: string[] = []
  for (const rel of [...data, ...rejected]) {
    const st = await stat(path.join(root, rel))
    const keep = await cleanLength(path.join(root, rel), st.size)
    if (keep >= 0) {
      await isolateTornTail(root, rel, st.size, keep, sourceId, logType)
      report.tornTails.push({ file: rel, offset: keep, bytes: st.size - keep })
    }
    if (st.mtimeMs >= now - filter.windowMs && !rel.startsWith('_rejected')) recent.push(rel)
  }
  const found: Array<{ id: string; at: number }> = []
  for (const rel of recent) {
    const lines = createInterface({ input: createReadStream(path.join(root, rel)), crlfDelay: Infinity })
    for await (const line of lines) {
      if (line === '') continue
      let rec: { metadata?: { id?: unknown }; p_parse_time?: unknown; p_source_id?: unknown } | null
      try {
        rec = JSON.parse(line)
      } catch {
        continue // only complete lines remain after the pass above; this is belt and braces
      }
      const id = rec?.metadata?.id
      const at = Date.parse(String(rec?.p_parse_time))
      if (rec?.p_source_id !== sourceId) continue
      if (typeof id === 'string' && id !== '' && Number.isFinite(at) && at >= now - filter.windowMs)
        found.push({ id, at })
    }
  }
  found.sort((a, b) => a.at - b.at)
  for (const f of found) filter.addStored(f.id, f.at)
  report.idsLoaded = found.length
  return report
}
