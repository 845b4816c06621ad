// Writes Editor.Audit records straight into the stored format (the log type's normalizer and
// stored line, one NDJSON file per hour partition, as ingest lays them out under `logs/`) without
// going through HTTP: the query benchmarks' data set (issue 29: one day, 1M records).
import fs from 'node:fs'
import path from 'node:path'
import { editorAuditLogType } from '../src/ingest/editor-audit-log-type.js'
import { storedLine } from '../src/ingest/log-type.js'
import { mulberry32 } from '../test/helpers/seeded-random.js'

const ROLES = ['member', 'admin', 'owner', 'viewer']
const ACTORS = Array.from({ length: 200 }, (_, i) => `user${i}@example.com`)

/** One record of a few common kinds; a role change in one of four. */
function record(rand: () => number, eventMs: number, n: number): Record<string, unknown> {
  const actor = ACTORS[Math.floor(rand() * ACTORS.length)]!
  const base = {
    ip_address: `203.0.113.${n % 250}`,
    team_id: '4821',
    user_email: actor,
    metadata: { id: `rec-${n}`, timestamp: new Date(eventMs).toISOString(), context: { request_id: `req_${n}` } },
  }
  const k = n % 4
  if (k === 0)
    return {
      ...base,
      update_user_role: { old_role: 'member', new_role: ROLES[Math.floor(rand() * 4)], user_email: ACTORS[n % 200] },
    }
  if (k === 1) return { ...base, login: { login_type: 'LOGIN_TYPE_WEB', success: rand() < 0.8 } }
  if (k === 2) return { ...base, team_settings: { setting_name: 'privacy', old_value: 'a', new_value: 'b' } }
  return { ...base, api_key: { action: 'create', api_key_id: `k${n}` } }
}

/**
 * `records` records spread evenly over the 24 hours of `day` (`YYYY-MM-DD`), written under
 * `logsRoot/Editor.Audit/dt=…/hour=…/` as ingest writes them. Returns the bytes written.
 */
export function writeStoredDay(logsRoot: string, day: string, records: number, seed = 29): number {
  const rand = mulberry32(seed)
  const start = Date.parse(`${day}T00:00:00.000Z`)
  const step = 86_400_000 / records
  let bytes = 0
  let hour = -1
  let lines: string[] = []
  const flush = () => {
    if (hour < 0 || lines.length === 0) return
    const dir = path.join(logsRoot, editorAuditLogType.name, `dt=${day}`, `hour=${String(hour).padStart(2, '0')}`)
    fs.mkdirSync(dir, { recursive: true })
    const text = `${lines.join('\n')}\n`
    fs.writeFileSync(path.join(dir, 'bench-20261120T000000Z-000000-000000.ndjson'), text)
    bytes += Buffer.byteLength(text)
    lines = []
  }
  for (let n = 0; n < records; n++) {
    const eventMs = Math.floor(start + n * step)
    const h = new Date(eventMs).getUTCHours()
    if (h !== hour) {
      flush()
      hour = h
    }
    const verdict = editorAuditLogType.normalize(record(rand, eventMs, n), {
      sourceId: 'bench',
      parseTime: new Date(eventMs + 1000).toISOString(),
      rowId: `row${n.toString(36)}`,
    })
    if (!verdict.ok) throw new Error(`generated record ${n} refused: ${verdict.reason}`)
    lines.push(storedLine(verdict))
  }
  flush()
  return bytes
}
