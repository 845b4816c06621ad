// Concurrent writers: 50 clients create, replace and delete overlapping ids of one in-process server
// at once. Every acknowledged write must be exactly one commit (found by its Request-Id trailer),
// nothing refused may be in history, history stays linear and fsck-clean, and the final state of
// every id is the one written by the last commit touching it.
import fs from 'node:fs'
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, type ApiResponse } from '../helpers/rulekeeper.js'
import { fsck, mergeCommits, readLog, type LoggedCommit } from './history.js'

const CLIENTS = 50
const OPS_PER_CLIENT = 20
const IDS = Array.from({ length: 10 }, (_, i) => `Conc.Rule.${i}`)

type Method = 'POST' | 'PUT' | 'DELETE'
interface Op {
  requestId: string
  method: Method
  id: string
  marker?: string
  status: number
  text: string
  echoedId: string | null
  /** `description` of the rule in a POST/PUT response. */
  bodyMarker?: unknown
}

/** Status codes each method may legitimately answer in this scenario. */
const ALLOWED: Record<Method, number[]> = { POST: [200, 409], PUT: [200, 201], DELETE: [204, 404] }
/** The commit subject verb each 2xx answer implies. */
function expectedVerb(op: Op): string {
  if (op.method === 'DELETE') return 'Delete'
  if (op.method === 'POST') return 'Create'
  return op.status === 201 ? 'Create' : 'Update'
}

t.test(
  '50 concurrent clients on overlapping ids: one commit per acknowledged write, linear history, last commit wins',
  async (t) => {
    t.setTimeout(180_000)
    const s = await startInProcess()
    t.teardown(async () => {
      await s.close()
      fs.rmSync(s.dataDir, { recursive: true, force: true })
    })

    const ops: Op[] = []
    const started = Date.now()
    async function client(c: number): Promise<void> {
      for (let n = 0; n < OPS_PER_CLIENT; n++) {
        const id = IDS[Math.floor(Math.random() * IDS.length)]!
        const r = Math.random()
        const method: Method = r < 0.35 ? 'POST' : r < 0.75 ? 'PUT' : 'DELETE'
        const requestId = `cw-${c}-${n}`
        const marker = `client${c}-op${n}`
        const headers = { 'X-Request-Id': requestId }
        let res: ApiResponse
        if (method === 'DELETE')
          res = await s.request('DELETE', `/simple-rules/${encodeURIComponent(id)}`, undefined, headers)
        else {
          const body = SAMPLE_BODIES.simple(id, { description: marker })
          const url =
            method === 'POST'
              ? '/simple-rules?run-tests-first=false'
              : `/simple-rules/${encodeURIComponent(id)}?run-tests-first=false`
          res = await s.request(method, url, body, headers)
        }
        ops.push({
          requestId,
          method,
          id,
          marker: method === 'DELETE' ? undefined : marker,
          status: res.status,
          text: res.text.slice(0, 300),
          echoedId: res.headers.get('x-request-id'),
          bodyMarker: res.body?.description,
        })
      }
    }
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)))
    t.comment(`${ops.length} writes in ${Date.now() - started} ms`)

    // Every answer is one this scenario allows; never a 5xx.
    const fiveXX = ops.filter((o) => o.status >= 500)
    t.same(fiveXX, [], 'no write answered 5xx')
    const unexpected = ops.filter((o) => !ALLOWED[o.method].includes(o.status))
    t.same(
      unexpected,
      [],
      'every write answered a status its method allows (POST 200/409, PUT 200/201, DELETE 204/404)',
    )
    t.same(
      ops.filter((o) => o.echoedId !== o.requestId),
      [],
      'every response echoes its X-Request-Id',
    )
    t.same(
      ops.filter((o) => o.method !== 'DELETE' && o.status >= 200 && o.status < 300 && o.bodyMarker !== o.marker),
      [],
      'every 2xx POST/PUT answers the rule as that write saved it',
    )

    // History is linear and fsck-clean.
    t.same(mergeCommits(s.gitdir), [], 'no commit has more than one parent')
    const f = fsck(s.gitdir)
    t.ok(f.ok, 'git fsck --strict exits 0')
    t.equal(f.output, '', 'git fsck --strict reports nothing')

    // One commit per acknowledged change, none for a refused one.
    const log = readLog(s.gitdir)
    const commitsByRequest = new Map<string, LoggedCommit[]>()
    for (const c of log) {
      const rid = c.trailers.get('Request-Id')
      if (!rid) continue
      commitsByRequest.set(rid, [...(commitsByRequest.get(rid) ?? []), c])
    }
    const acked = ops.filter((o) => o.status >= 200 && o.status < 300)
    const refused = ops.filter((o) => !(o.status >= 200 && o.status < 300))
    const wrongCount = acked
      .filter((o) => (commitsByRequest.get(o.requestId)?.length ?? 0) !== 1)
      .map((o) => ({ ...o, commits: commitsByRequest.get(o.requestId)?.length ?? 0 }))
    t.same(wrongCount, [], 'every 2xx write is exactly one commit')
    const refusedInHistory = refused
      .filter((o) => commitsByRequest.has(o.requestId))
      .map((o) => ({ ...o, subject: commitsByRequest.get(o.requestId)![0]!.subject }))
    t.same(refusedInHistory, [], 'no refused write left a commit')
    const ours = log.filter((c) => c.trailers.get('Request-Id')?.startsWith('cw-'))
    t.equal(ours.length, acked.length, 'commits made by the run = acknowledged writes')
    const mislabelled = acked.filter((o) => {
      const c = commitsByRequest.get(o.requestId)?.[0]
      return (
        c && (c.trailers.get('Rule-Id') !== o.id || !c.subject.startsWith(`${expectedVerb(o)} simple rule ${o.id}`))
      )
    })
    t.same(mislabelled, [], 'each commit names the write that made it (verb and Rule-Id)')
    t.ok(
      acked.some((o) => o.method === 'DELETE') &&
        acked.some((o) => o.method === 'PUT') &&
        acked.some((o) => o.method === 'POST'),
      'the run acknowledged creates, replaces and deletes',
    )

    // The final state of each id is the one of the last commit touching it (newest first in the log).
    const byRequest = new Map(ops.map((o) => [o.requestId, o]))
    for (const id of IDS) {
      const last = log.find((c) => c.trailers.get('Rule-Id') === id)
      const got = await s.request('GET', `/simple-rules/${encodeURIComponent(id)}`)
      t.not(got.status, 500, `GET ${id} is not a 5xx`)
      if (!last) {
        t.equal(got.status, 404, `${id} was never committed and does not exist`)
        continue
      }
      const op = byRequest.get(last.trailers.get('Request-Id') ?? '')
      if (last.subject.startsWith('Delete')) {
        t.equal(got.status, 404, `${id}: last commit is a delete (${last.trailers.get('Request-Id')}) → 404`)
      } else {
        t.equal(got.status, 200, `${id}: last commit is a write (${last.trailers.get('Request-Id')}) → 200`)
        t.equal(got.body?.description, op?.marker, `${id}: GET returns the marker of the last commit touching it`)
      }
    }
  },
)
