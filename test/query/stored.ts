// Test helper: Editor.Audit events written in the stored format (the log type's normalizer and
// stored line, one file per hour partition, as ingest lays them out) for the query tests.
import fs from 'node:fs'
import path from 'node:path'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { storedLine } from '../../src/ingest/log-type.js'

export interface EventSpec {
  at: string
  role?: string
  actor?: string
}

let seq = 0

/** Stores one role change (or a login when `role` is absent) per spec; returns the files written. */
export function writeEvents(logsRoot: string, events: EventSpec[]): string[] {
  const byDir = new Map<string, string[]>()
  for (const ev of events) {
    const n = seq++
    const rec: Record<string, unknown> = {
      user_email: ev.actor ?? 'dana@example.com',
      metadata: { id: `q-${n}-${Date.now()}`, timestamp: ev.at },
      ...(ev.role
        ? { update_user_role: { old_role: 'member', new_role: ev.role, user_email: `u${n}@example.com` } }
        : { login: { login_type: 'LOGIN_TYPE_WEB', success: true } }),
    }
    const v = editorAuditLogType.normalize(rec, { sourceId: 'test', parseTime: ev.at, rowId: `r${n}` })
    if (!v.ok) throw new Error(v.reason)
    const dir = path.join(
      logsRoot,
      editorAuditLogType.name,
      `dt=${v.eventTime.slice(0, 10)}`,
      `hour=${v.eventTime.slice(11, 13)}`,
    )
    byDir.set(dir, [...(byDir.get(dir) ?? []), storedLine(v)])
  }
  const files: string[] = []
  for (const [dir, lines] of byDir) {
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, `test-20261120T000000Z-000000-${String(seq).padStart(6, '0')}.ndjson`)
    fs.appendFileSync(file, `${lines.join('\n')}\n`)
    files.push(file)
  }
  return files
}
