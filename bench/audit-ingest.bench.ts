// Audit-log ingest: 100-record deliveries on 32 connections against a server in a child process
// (so the load generator gets the other core), each acknowledged only after group-commit fsync.
// Baseline in the same run: the very bytes the run stored, rewritten with plain write + fdatasync
// in batches on the same disk (the disk's limit). Target: ≥ 30,000 records/s; p99 ack latency shown.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, open, readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

const RECORDS_PER_REQUEST = 100
const CONNECTIONS = 32
const TARGET = 30_000
const TOKEN = 'bench-token'
const BASELINE_BATCH_BYTES = 256 * 1024
const SERVER = path.resolve(import.meta.dirname, '..', 'test', 'audit', 'fixtures', 'ingest-server.ts')

type Autocannon = (opts: Record<string, unknown>) => Promise<any>

function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
      env: { ...process.env, RULEKEEPER_DATA_DIR: dataDir, RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /PORT (\d+)/.exec(out)
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` })
    })
    child.on('exit', (code) => reject(new Error(`ingest server exited (${code})`)))
  })
}

/** A 100-record NDJSON body; ids are made unique per request so nothing is a duplicate. */
function bodyTemplate(): string[] {
  const parts: string[] = []
  for (let i = 0; i < RECORDS_PER_REQUEST; i++) {
    const rec = {
      ip_address: '203.0.113.10',
      team_id: '4821',
      user_email: 'dana@example.com',
      metadata: {
        id: `@@-${i}`,
        timestamp: `2026-11-20T${String(8 + (i % 3)).padStart(2, '0')}:01:12.310Z`,
        context: { auth_id: 'idp|dana', ghost_mode: false, privacy_mode: 'PRIVACY_MODE_NO_TRAINING', request_id: `req_${i}` },
      },
      invite_email_sent: { invite_id: 'inv_31', role: 'member', sender_user_id: '77', recipient_email: 'fay@example.org', sender_email: 'dana@example.com' },
    }
    parts.push(JSON.stringify(rec))
  }
  return parts.join('\n').split('@@')
}

async function dataFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...(await dataFiles(p)))
    else if (e.name.endsWith('.ndjson')) out.push(p)
  }
  return out.sort()
}

/** Writes `bytes` with plain write + fdatasync per batch: what the disk can do with no server. */
async function rawWriteFsync(file: string, bytes: Buffer): Promise<number> {
  const fh = await open(file, 'w')
  const t0 = performance.now()
  for (let off = 0; off < bytes.length; off += BASELINE_BATCH_BYTES) {
    await fh.write(bytes, off, Math.min(BASELINE_BATCH_BYTES, bytes.length - off))
    await fh.datasync()
  }
  const seconds = (performance.now() - t0) / 1000
  await fh.close()
  return seconds
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const autocannon = ((await import('autocannon' as string)) as { default: Autocannon }).default
  const dataDir = path.join(ctx.tmpDir, 'audit-ingest')
  await mkdir(dataDir, { recursive: true })
  const duration = Math.max(2, Math.round(15 * ctx.scale))
  ctx.progress(`audit ingest: starting the server, then ${duration} s of load on ${CONNECTIONS} connections`)
  const { child, url } = await startServer(dataDir)
  const template = bodyTemplate()
  let seq = 0
  let accepted = 0
  let notAccepted = 0
  const run = (seconds: number) =>
    autocannon({
      url: `${url}/http/editor-audit`,
      connections: CONNECTIONS,
      duration: seconds,
      requests: [{
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
        setupRequest: (req: any) => ({ ...req, body: template.join(`b${seq++}`) }),
        onResponse: (status: number, body: string) => {
          if (status !== 200) return void notAccepted++
          const n = JSON.parse(body).accepted as number
          accepted += n
          if (n !== RECORDS_PER_REQUEST) notAccepted++
        },
      }],
    })
  try {
    await run(1) // warm-up: JIT, first files and directories
    accepted = 0
    notAccepted = 0
    const result = await run(duration)
    const seconds = (result.duration as number) ?? duration
    const recordsPerSecond = accepted / seconds
    const p99 = result.latency.p99 as number
    ctx.progress(`audit ingest: ${Math.round(recordsPerSecond)} records/s, p99 ${p99} ms, ${result.non2xx} non-2xx, ${result.errors} errors`)
    child.kill('SIGKILL')

    // Baseline: the same stored bytes, written and fdatasync'ed in batches on the same disk.
    const files = await dataFiles(path.join(dataDir, 'logs', 'Editor.Audit'))
    const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(f))))
    let lines = 0
    for (const b of bytes) if (b === 0x0a) lines++
    const baselineSeconds = await rawWriteFsync(path.join(ctx.tmpDir, 'raw-baseline.ndjson'), bytes)
    const baselineRecordsPerSecond = lines / baselineSeconds
    await rm(dataDir, { recursive: true, force: true })
    const ratio = recordsPerSecond / baselineRecordsPerSecond
    return [
      {
        name: 'audit-log ingest (100-record requests, 32 connections, ack after fsync)',
        target: '>= 30,000 records/s',
        value: Math.round(recordsPerSecond),
        unit: 'records/s',
        baseline: { name: `raw write + fdatasync of the same ${bytes.length} bytes in ${BASELINE_BATCH_BYTES / 1024} KiB batches`, value: Math.round(baselineRecordsPerSecond), unit: 'records/s' },
        ratio: Number(ratio.toFixed(3)),
        pass: recordsPerSecond >= TARGET && notAccepted === 0 && result.errors === 0,
        notes: `p99 ack latency ${p99} ms (p50 ${result.latency.p50} ms); ${accepted} records stored in ${seconds.toFixed(1)} s; ${notAccepted} responses not fully accepted, ${result.errors} errors; ${lines} lines on disk`,
      },
      {
        name: 'audit-log ingest p99 acknowledgement latency',
        target: 'reported (no target)',
        value: p99,
        unit: 'ms',
        pass: true,
      },
    ]
  } finally {
    child.kill('SIGKILL')
  }
}

export default bench
