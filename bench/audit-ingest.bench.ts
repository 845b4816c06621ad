// Audit-log ingest: 100-record deliveries on 32 connections against a server in a child process
// (so the load generator gets the other core), each acknowledged only after group-commit fsync.
// Baseline in the same run: the very bytes the run stored, rewritten with plain write + fdatasync
// in batches on the same disk (the disk's limit). Target: ≥ 30,000 records/s; p99 ack latency shown.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { type Autocannon, CONNECTIONS, IngestLoad, importAutocannon } from './ingest-load.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

const TARGET = 30_000
const TOKEN = 'bench-token'
const BASELINE_BATCH_BYTES = 256 * 1024
const SERVER = path.resolve(import.meta.dirname, '..', 'test', 'ingest', 'fixtures', 'ingest-server.ts')

function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    // With the young-generation size `rulekeeper serve` runs with (bin/rulekeeper.js).
    const child = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', SERVER], {
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

interface LoadResult {
  recordsPerSecond: number
  accepted: number
  seconds: number
  p50: number
  p99: number
  errors: number
  notAccepted: number
}

/** Starts a server on `dataDir`, warms it up, then measures `duration` seconds of load. */
async function measureIngest(autocannon: Autocannon, dataDir: string, duration: number): Promise<LoadResult> {
  await mkdir(dataDir, { recursive: true })
  const { child, url } = await startServer(dataDir)
  const load = new IngestLoad(autocannon, url, TOKEN)
  try {
    await load.run(1) // warm-up: JIT, first files and directories
    load.reset()
    const result = await load.run(duration)
    const seconds = (result.duration as number) ?? duration
    return {
      recordsPerSecond: load.accepted / seconds,
      accepted: load.accepted,
      seconds,
      p50: result.latency.p50 as number,
      p99: result.latency.p99 as number,
      errors: (result.errors as number) + (result.timeouts as number),
      notAccepted: load.refused + load.partial,
    }
  } finally {
    child.kill('SIGKILL')
  }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const autocannon = await importAutocannon()
  const dataDir = path.join(ctx.tmpDir, 'audit-ingest')
  const duration = Math.max(2, Math.round(15 * ctx.scale))
  const loadavg = () => os.loadavg()[0]!.toFixed(1)

  // The baseline rewrites the very bytes the run stored, right after it, so both see the same disk
  // under the same neighbours; the load average is reported because this machine may be shared.
  ctx.progress(`audit ingest: ${duration} s of load on ${CONNECTIONS} connections (load average ${loadavg()})`)
  const disk = await measureIngest(autocannon, dataDir, duration)
  ctx.progress(`audit ingest: ${Math.round(disk.recordsPerSecond)} records/s, p99 ${disk.p99} ms`)
  const files = await dataFiles(path.join(dataDir, 'logs', 'Editor.Audit'))
  const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(f))))
  let lines = 0
  for (const b of bytes) if (b === 0x0a) lines++
  await rm(dataDir, { recursive: true, force: true })
  const baselineSeconds = await rawWriteFsync(path.join(ctx.tmpDir, 'raw-baseline.ndjson'), bytes)
  const baselineRecordsPerSecond = lines / baselineSeconds
  const ratio = disk.recordsPerSecond / baselineRecordsPerSecond

  // The same load with the data on tmpfs, where fsync costs nothing: the server's CPU ceiling,
  // which tells a slow disk apart from slow code when the target is missed.
  let cpu: LoadResult | undefined
  if (existsSync('/dev/shm')) {
    const shmDir = await mkdtemp('/dev/shm/rk-audit-bench-')
    try {
      cpu = await measureIngest(autocannon, shmDir, Math.max(2, Math.round(5 * ctx.scale)))
    } finally {
      await rm(shmDir, { recursive: true, force: true })
    }
    ctx.progress(`audit ingest on tmpfs: ${Math.round(cpu.recordsPerSecond)} records/s`)
  }

  const results: BenchResult[] = [
    {
      name: 'audit-log ingest (100-record requests, 32 connections, ack after fsync)',
      target: '>= 30,000 records/s',
      value: Math.round(disk.recordsPerSecond),
      unit: 'records/s',
      baseline: {
        name: `raw write + fdatasync of the same ${bytes.length} bytes in ${BASELINE_BATCH_BYTES / 1024} KiB batches, same disk`,
        value: Math.round(baselineRecordsPerSecond),
        unit: 'records/s',
      },
      ratio: Number(ratio.toFixed(3)),
      pass: disk.recordsPerSecond >= TARGET && disk.notAccepted === 0 && disk.errors === 0,
      notes:
        `p99 ack latency ${disk.p99} ms (p50 ${disk.p50} ms); ${disk.accepted} records in ${disk.seconds.toFixed(1)} s; ` +
        `${disk.notAccepted} responses not fully accepted, ${disk.errors} errors; load average ${loadavg()} at the end`,
    },
    {
      name: 'audit-log ingest p99 acknowledgement latency',
      target: 'reported',
      value: disk.p99,
      unit: 'ms',
      pass: true,
    },
  ]
  if (cpu) {
    results.push({
      name: 'audit-log ingest, data on tmpfs (CPU ceiling, fsync free)',
      target: 'context',
      value: Math.round(cpu.recordsPerSecond),
      unit: 'records/s',
      pass: true,
      notes: `p99 ${cpu.p99} ms; the disk-bound run reached ${((100 * disk.recordsPerSecond) / cpu.recordsPerSecond).toFixed(0)}% of it`,
    })
  }
  return results
}

export default bench
