// Shared by the detection tests: records whose command name picks a scenario's rule, and sending
// them through the real ingest route, then waiting until detection has evaluated them.
import { makeRecord, ndjson, post, TOKEN } from '../ingest/helpers.js'
import type { InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, type TestServer } from '../helpers/rulekeeper.js'

/** The server environment that enables the Editor.Audit log source these tests post to. */
export const DETECT_ENV = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }

let seq = 0

/** A team_command record whose command_name picks the scenario's rule; ids start with `prefix`. */
export function commandRecord(prefix: string, name: string, timestamp: string, extra: Record<string, unknown> = {}) {
  const r = makeRecord(`${prefix}-${name}-${seq++}`, timestamp, extra) as Record<string, unknown>
  delete r.login
  r.team_command = { action: 'create', command_id: 'c1', command_name: name, is_active: true }
  return r
}

/** A service in process, or a real server (a test whose port is the point). */
type AnyServer = InProcessServer | TestServer

/** POSTs an NDJSON body to the Editor.Audit source with the source's token; the answer. */
export function postLog(s: Pick<InProcessServer, 'send'> | Pick<TestServer, 'url'>, body: string | Buffer) {
  const headers = { authorization: `Bearer ${TOKEN}` }
  return 'send' in s
    ? s.send('POST', '/http/editor-audit', body, headers)
    : post(`${s.url}/http/editor-audit`, body, headers)
}

/** POSTs the records to the Editor.Audit source and waits until detection is idle; the ingest answer. */
export async function sendAndDetect(s: AnyServer, records: unknown[]): Promise<unknown> {
  const res = await postLog(s, ndjson(records))
  if (res.status !== 200) throw new Error(`ingest: ${res.status} ${JSON.stringify(res.body)}`)
  await s.server.detection.detector.idle()
  return res.body
}

/** Creates a simple Editor.Audit rule matching records whose command name is `name` (no unit tests). */
export async function commandRule(
  s: Pick<InProcessServer, 'request'>,
  id: string,
  name: string,
  extra: Record<string, unknown> = {},
) {
  const res = await s.request('POST', '/simple-rules', {
    ...SAMPLE_BODIES.simple(id, {
      logTypes: ['Editor.Audit'],
      detection: `- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: ${name}\n`,
      tests: [],
    }),
    ...extra,
  })
  if (res.status !== 200) throw new Error(`rule: ${res.status} ${res.text}`)
}
