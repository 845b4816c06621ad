// Crash safety of ingest: a child server under concurrent load is killed with SIGKILL at random
// moments, again and again. Every record acknowledged before a kill must be on disk exactly once,
// every stored line must be a whole JSON document, and the next start must need no repair. Like a
// real sender, the load retries what was not acknowledged, so in the end every record is stored once.
// Real port: a crash (SIGKILL of a child server).
import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import { appendFile, readFile, stat } from 'node:fs/promises'
import t from 'tap'
import { TOKEN, makeRecord, ndjson, post, storeFiles, tempDataDir } from './helpers.js'

const KILLS = Number(process.env.AUDIT_CRASH_KILLS ?? 50)
const WORKERS = 8
const BATCH = 40
const SERVER = path.join(import.meta.dirname, 'fixtures', 'ingest-server.ts')

function startChild(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
      env: {
        ...process.env,
        RULEKEEPER_DATA_DIR: dataDir,
        RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN,
        AUDIT_TEST_LOG_LEVEL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`child did not start in time: ${err}`)), 30_000)
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /PORT (\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ child, url: `http://127.0.0.1:${m[1]}` })
      }
    })
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`child exited before listening (${code ?? signal}): ${err}`))
    })
  })
}

const killChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })

interface Batch {
  ids: string[]
  body: string
}

t.test(`records acknowledged before ${KILLS} SIGKILLs are stored exactly once`, async (t) => {
  const dataDir = await tempDataDir(t)
  const acked = new Set<string>()
  let unacked: Batch[] = []
  let seq = 0
  let ackedRequests = 0
  let badCounts = 0
  const hours = ['2026-11-19T23', '2026-11-20T00', '2026-11-20T08', '2026-11-21T13']
  const newBatch = (): Batch => {
    const ids: string[] = []
    const records: unknown[] = []
    for (let i = 0; i < BATCH; i++) {
      const id = `crash-${seq++}`
      ids.push(id)
      records.push(makeRecord(id, `${hours[seq % hours.length]}:${String(seq % 60).padStart(2, '0')}:00.000Z`))
    }
    // One invalid record per batch keeps the _rejected writer busy in the same commits.
    records.push({ metadata: { id: `bad-${seq}` }, login: {} })
    return { ids, body: ndjson(records) }
  }

  async function load(url: string, stop: { now: boolean }) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      while (!stop.now) {
        const batch = unacked.shift() ?? newBatch()
        try {
          const res = await post(`${url}/http/editor-audit`, batch.body, undefined, { agent })
          if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(res.body)}`)
          if (res.body.accepted + res.body.duplicates !== batch.ids.length || res.body.rejected !== 1) badCounts++
          for (const id of batch.ids) acked.add(id)
          ackedRequests++
        } catch (err) {
          if (!stop.now && !/ECONNRESET|ECONNREFUSED|socket hang up|EPIPE/.test(String(err))) throw err
          unacked.push(batch)
          return
        }
      }
    } finally {
      agent.destroy()
    }
  }

  const started = Date.now()
  let injected = 0
  for (let round = 0; round < KILLS; round++) {
    const { child, url } = await startChild(dataDir)
    const stop = { now: false }
    const workers = Array.from({ length: WORKERS }, () => load(url, stop))
    // Kill at a random moment once the load is flowing (the first ack of the round, or 10 s on a
    // machine too busy to give one), so every round kills with requests in flight.
    const before = ackedRequests
    for (let waited = 0; ackedRequests === before && waited < 10_000; waited += 10)
      await new Promise((r) => setTimeout(r, 10)) // wait: poll interval of a wait on a condition
    await new Promise((r) => setTimeout(r, Math.random() * 300)) // wait: a random kill moment (the crash is the point)
    stop.now = true
    await killChild(child)
    await Promise.all(workers)
    // SIGKILL alone rarely tears a line (the kernel finishes a write it started); a power cut can.
    // Every fifth round leaves such a tail, half a record never acknowledged, in the newest file.
    const files = (await storeFiles(dataDir)).filter((f) => !f.includes('_rejected'))
    if (round % 5 === 4 && files.length > 0) {
      let newest = files[0]!
      for (const f of files) if ((await stat(f)).mtimeMs > (await stat(newest)).mtimeMs) newest = f
      const line = JSON.stringify(makeRecord(`torn-${round}`))
      await appendFile(newest, line.slice(0, 10 + Math.floor(Math.random() * (line.length - 20))))
      injected++
    }
  }
  t.ok(ackedRequests > KILLS, `${ackedRequests} deliveries acknowledged across ${KILLS} kills`)

  // A last start (without repair) where the sender's retries get through.
  const { child, url } = await startChild(dataDir)
  t.teardown(() => killChild(child))
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const retries = unacked
  unacked = []
  for (const batch of retries) {
    const res = await post(`${url}/http/editor-audit`, batch.body, undefined, { agent })
    t.equal(res.status, 200)
    for (const id of batch.ids) acked.add(id)
  }
  agent.destroy()
  await killChild(child)
  t.equal(badCounts, 0, 'every acknowledged response counted each record once')

  const seen = new Map<string, number>()
  let glued = 0
  let torn = 0
  for (const file of await storeFiles(dataDir)) {
    const text = await readFile(file, 'utf8')
    t.ok(text === '' || text.endsWith('\n'), `${path.basename(file)} ends with a whole line`)
    for (const line of text.split('\n')) {
      if (line === '') continue
      let rec: any
      try {
        rec = JSON.parse(line)
      } catch {
        glued++
        continue
      }
      if (file.includes('_rejected')) {
        if (/torn tail/.test(rec.error)) torn++
        continue
      }
      seen.set(rec.metadata.id, (seen.get(rec.metadata.id) ?? 0) + 1)
    }
  }
  t.equal(glued, 0, 'every stored line is one whole JSON document')
  t.ok(torn >= injected, `every torn tail was isolated (${torn} found, ${injected} made)`)
  t.notOk(
    [...seen.keys()].some((id) => id.startsWith('torn-')),
    'no torn record reached the data',
  )
  const missing = [...acked].filter((id) => !seen.has(id))
  const twice = [...seen].filter(([, n]) => n > 1)
  t.same(missing.slice(0, 10), [], `no acknowledged record is missing (${acked.size} acknowledged)`)
  t.same(twice.slice(0, 10), [], 'no record is stored twice')
  t.equal(seen.size, seq, 'in the end every record sent is stored exactly once')
  t.comment(
    `${seq} records, ${acked.size} acknowledged, ${torn} torn tails isolated, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
})
