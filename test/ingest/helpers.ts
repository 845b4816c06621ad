// Shared helpers for the log-source tests: temp data dirs, posting deliveries over real HTTP, and
// reading back what landed on disk (data lines by partition, rejected lines).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type http from 'node:http'
import { rawRequest } from '../helpers/raw-http.js'

// The sample deliveries the project ships (examples/editor-audit/), as the docs use them.
export const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/editor-audit')
export const TOKEN = 'test-token-0123456789'

export async function tempDataDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rk-audit-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

export interface PostResult {
  status: number
  body: any
  headers: http.IncomingHttpHeaders
}

/** POST with node:http so that headers (Content-Length, chunked) are exactly what the test says. */
export async function post(
  url: string,
  body: Buffer | string,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
  opts: { chunked?: boolean; agent?: http.Agent } = {},
): Promise<PostResult> {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body
  const h: Record<string, string | number> = { ...headers }
  if (!opts.chunked) h['content-length'] = buf.length
  const res = await rawRequest(url, {
    method: 'POST',
    headers: h,
    body: buf,
    agent: opts.agent,
    chunkBytes: opts.chunked ? 64 * 1024 : undefined,
  })
  // The body parsed as JSON, else its text.
  return { status: res.status, body: res.json === undefined ? res.text : res.json, headers: res.headers }
}

async function walk(dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const out: string[] = []
  for (const n of names.sort()) {
    const p = path.join(dir, n)
    if (n.endsWith('.ndjson') || n.startsWith('.tmp-')) out.push(p)
    else out.push(...(await walk(p)))
  }
  return out
}

export interface StoredLine {
  /** Path relative to <dataDir>/logs. */
  file: string
  text: string
}

/** Every line of every file under logs/<area>; area "Editor.Audit" (data) or "_rejected". */
export async function storedLines(dataDir: string, area: 'Editor.Audit' | '_rejected'): Promise<StoredLine[]> {
  const root = path.join(dataDir, 'logs')
  const out: StoredLine[] = []
  for (const f of await walk(path.join(root, area))) {
    const text = await readFile(f, 'utf8')
    for (const line of text.split('\n')) if (line !== '') out.push({ file: path.relative(root, f), text: line })
  }
  return out
}

export async function storedRecords(dataDir: string): Promise<Array<{ file: string; record: any }>> {
  return (await storedLines(dataDir, 'Editor.Audit')).map((l) => ({ file: l.file, record: JSON.parse(l.text) }))
}

export async function storeFiles(dataDir: string): Promise<string[]> {
  return walk(path.join(dataDir, 'logs'))
}

/** A valid record with the given id and event time. */
export function makeRecord(id: string, timestamp = '2026-11-20T08:00:00.000Z', extra: Record<string, unknown> = {}) {
  return {
    ip_address: '198.51.100.7',
    team_id: '4821',
    user_email: 'dana@example.com',
    metadata: { id, timestamp, context: { auth_id: 'idp|dana', request_id: `req_${id}` } },
    login: { login_type: 'LOGIN_TYPE_WEB', success: true },
    ...extra,
  }
}

export const ndjson = (records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`
