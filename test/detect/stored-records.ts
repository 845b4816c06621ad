// Test fixture: Editor.Audit records written straight into a data directory's stored log (one data
// file per event hour, lines as the log source stores them), for replay tests that need many
// records without ingesting them one by one. Write before the server starts: it announces the files
// it finds at start, and a replay reads each up to that length.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'

/** The stored line of record `i` (event time `hour`:00 + i ms on 2026-11-20); `extra` merged in. */
export function storedAuditLine(i: number, hour: number, extra: Record<string, unknown> = {}): string {
  const event = new Date(Date.UTC(2026, 10, 20, hour, 0, 0) + (i % 3_600_000)).toISOString()
  return JSON.stringify({
    user_email: `user${i % 200}@example.com`,
    metadata: { id: `r${i}`, timestamp: event },
    ...extra,
    p_log_type: 'Editor.Audit',
    p_event_time: event,
    p_parse_time: '2026-11-21T00:00:00.000Z',
    p_row_id: `row${String(i).padStart(10, '0')}`,
  })
}

/** Writes `n` records over `hours` data files of 2026-11-20; returns the bytes written. */
export async function writeStoredAudit(
  dataDir: string,
  n: number,
  o: { hours?: number; extra?: (i: number) => Record<string, unknown> } = {},
): Promise<number> {
  const hours = o.hours ?? 4
  let bytes = 0
  for (let h = 0; h < hours; h++) {
    const dir = path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2026-11-20', `hour=${String(h).padStart(2, '0')}`)
    await mkdir(dir, { recursive: true })
    const lines: string[] = []
    for (let i = h; i < n; i += hours) lines.push(storedAuditLine(i, h, o.extra?.(i)))
    const text = `${lines.join('\n')}\n`
    bytes += Buffer.byteLength(text)
    await writeFile(path.join(dir, 'test.ndjson'), text)
  }
  return bytes
}

/** A replay over all of 2026-11-20. */
export const REPLAY_DAY = { from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' }
