// The attacks of issue 27 findings 1–3 and 10–12 as bench/attack-lag.ts stages them, each as a
// hostile user with an ordinary token (or push access) would: `prepare` runs before the server
// starts (stored records), `setup` once it answers (rules, pushed versions, prepared commits), and
// `run` is the attack itself, resolving when the last request of it is answered.
import fs from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { API_TOKEN, api, auditLine, createToken, git, postRecords, run, type Server } from './attack-lag-server.js'

export interface Attack {
  /** What is sent, for the report. */
  size: string
  prepare?(dataDir: string, tmp: string): Promise<void>
  setup?(s: Server, tmp: string): Promise<void>
  run(s: Server, tmp: string): Promise<string>
}

const REPLAY_RECORDS = Number(process.env.ATTACK_LAG_REPLAY_RECORDS ?? 200_000)
const BIG_FILE_MB = Number(process.env.ATTACK_LAG_BIG_FILE_MB ?? 100)
const DIFF_LINES = 4000
const DIFF_REQUESTS = Number(process.env.ATTACK_LAG_DIFF_REQUESTS ?? 30)
const HOSTILE_RECORDS = 3000
const BULK_FILES = 50_000

const simpleYaml = (id: string, logType = 'AWS.CloudTrail') =>
  `AnalysisType: rule\nRuleID: ${id}\nEnabled: true\nSeverity: Low\nLogTypes:\n  - ${logType}\nDetection:\n  - KeyPath: eventName\n    Condition: Equals\n    Value: ConsoleLogin\n`

/** A working clone of the server's repository (`<data dir>/repo.git`, pushed to as a user would). */
async function clone(s: Server, tmp: string): Promise<string> {
  const dir = path.join(tmp, 'work')
  fs.rmSync(dir, { recursive: true, force: true })
  await git(tmp, 'clone', '-q', path.join(s.dataDir, 'repo.git'), dir)
  return dir
}

async function reconcile(s: Server): Promise<string> {
  const r = await api(s, 'POST', '/reconcile')
  return `POST /reconcile ${r.status}${r.status === 200 ? '' : ` ${r.text.slice(0, 200)}`}`
}

/** `count` hostile records for one user, posted in deliveries of 100 as fast as they are acknowledged. */
async function postHostile(s: Server, user: string, count: number): Promise<string> {
  const statuses = new Map<number, number>()
  for (let i = 0; i < count; i += 100) {
    const lines = Array.from({ length: Math.min(100, count - i) }, (_, j) => auditLine(`h${i + j}`, user))
    const st = await postRecords(s, lines)
    statuses.set(st, (statuses.get(st) ?? 0) + 1)
  }
  return `deliveries ${JSON.stringify(Object.fromEntries(statuses))}`
}

async function pythonRule(s: Server, id: string, body: string): Promise<void> {
  const r = await api(s, 'POST', '/rules?run-tests-first=false', {
    id,
    severity: 'LOW',
    logTypes: ['Editor.Audit'],
    body,
    tests: [],
  })
  if (r.status !== 200) throw new Error(`python rule ${id}: ${r.status} ${r.text}`)
}

let replayToken = ''

async function replay(s: Server, token: string): Promise<string> {
  const res = await fetch(`${s.url}/replay`, {
    method: 'POST',
    headers: { 'X-API-Key': token, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      from: '2026-11-20T00:00:00Z',
      to: '2026-11-21T00:00:00Z',
      ruleIds: ['Attack.Replay.Every'],
    }),
    signal: AbortSignal.timeout(600_000),
  })
  let bytes = 0
  let head = ''
  for await (const chunk of res.body!) {
    if (head.length < 200) head += Buffer.from(chunk).toString('utf8').slice(0, 200)
    bytes += chunk.length
  }
  const answer = `POST /replay ${res.status}, ${(bytes / 2 ** 20).toFixed(1)} MiB answer`
  return res.status === 200 ? answer : `${answer}: ${head.slice(0, 200)}`
}

export const ATTACKS: Record<string, Attack> = {
  // Finding 1: POST /replay of stored records that all match, one alert each, with View Rules only.
  replay: {
    size: `${REPLAY_RECORDS.toLocaleString('en')} stored records, one alert each, replayed with a View Rules token`,
    async prepare(dataDir) {
      const files = 8
      for (let f = 0; f < files; f++) {
        const hour = String(f).padStart(2, '0')
        const dir = path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2026-11-20', `hour=${hour}`)
        await mkdir(dir, { recursive: true })
        const lines: string[] = []
        for (let i = f; i < REPLAY_RECORDS; i += files) {
          const event = new Date(Date.UTC(2026, 10, 20, f, 0, 0) + (i % 3_600_000)).toISOString()
          lines.push(
            JSON.stringify({
              ip_address: `198.51.100.${i % 250}`,
              user_email: `user${i % 200}@example.com`,
              metadata: { id: `r${i}`, timestamp: event },
              p_log_type: 'Editor.Audit',
              p_event_time: event,
              p_parse_time: new Date(Date.UTC(2026, 10, 21, 0, 0, 0) + Math.floor(i / 100)).toISOString(),
              p_row_id: `lag${String(i).padStart(10, '0')}`,
            }),
          )
        }
        await writeFile(path.join(dir, 'stored.ndjson'), `${lines.join('\n')}\n`)
      }
    },
    async setup(s) {
      const r = await api(s, 'POST', '/simple-rules?run-tests-first=false', {
        id: 'Attack.Replay.Every',
        severity: 'HIGH',
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: p_log_type\n  Condition: Equals\n  Value: Editor.Audit\n',
        groupBy: '- Key: p_row_id\n',
        enabled: false,
        tests: [],
      })
      if (r.status !== 200) throw new Error(`replay rule: ${r.status} ${r.text}`)
      replayToken = await createToken(s, 'attack-lag-view-rules', 'ViewRules')
    },
    run: (s) => replay(s, replayToken),
  },
  // Finding 1 again with a token that may see alerts (the bootstrap token): the whole answer is sent.
  'replay-alerts': {
    size: `the same ${REPLAY_RECORDS.toLocaleString('en')} records replayed with a token that has View Alerts too`,
    prepare: (dataDir, tmp) => ATTACKS.replay!.prepare!(dataDir, tmp),
    setup: (s, tmp) => ATTACKS.replay!.setup!(s, tmp),
    run: (s) => replay(s, API_TOKEN),
  },
  // Finding 2: a large (valid YAML) rule file pushed to the repository, then POST /reconcile.
  bigfile: {
    size: `one ${BIG_FILE_MB} MB YAML rule file pushed to the repository, then POST /reconcile`,
    async setup(s, tmp) {
      const dir = await clone(s, tmp)
      const big = path.join(dir, 'simple_rules/Huge.yml')
      fs.mkdirSync(path.dirname(big), { recursive: true })
      const fd = fs.openSync(big, 'w')
      fs.writeSync(fd, `${simpleYaml('Huge.Rule')}Tags:\n`)
      const lines = `  - ${'t'.repeat(1020)}\n`.repeat(1000)
      for (let i = 0; i < BIG_FILE_MB; i++) fs.writeSync(fd, lines)
      fs.closeSync(fd)
      await git(dir, 'add', '-A')
      await git(dir, 'commit', '-q', '-m', 'a huge rule file')
    },
    async run(s, tmp) {
      await git(path.join(tmp, 'work'), 'push', '-q', 'origin', 'HEAD:main')
      return reconcile(s)
    },
  },
  // Finding 3: GET /simple-rules/{id}/diff of two versions differing by 4,000 lines, asked repeatedly.
  diff: {
    size: `GET …/diff of ${DIFF_LINES.toLocaleString('en')} changed lines, ${DIFF_REQUESTS} times one after another`,
    async setup(s, tmp) {
      const dir = await clone(s, tmp)
      const head = simpleYaml('Big.Diff')
      const revs: string[] = []
      for (const c of ['a', 'b']) {
        const body = `${Array.from({ length: DIFF_LINES }, (_, i) => `#${c}${i}`).join('\n')}\n`
        fs.mkdirSync(path.join(dir, 'simple_rules'), { recursive: true })
        fs.writeFileSync(path.join(dir, 'simple_rules/Big.Diff.yml'), head + body)
        await git(dir, 'add', '-A')
        await git(dir, 'commit', '-q', '-m', `version ${c}`)
        await git(dir, 'push', '-q', 'origin', 'HEAD:main')
        revs.push((await git(dir, 'rev-parse', 'HEAD')).trim())
        await reconcile(s)
      }
      fs.writeFileSync(path.join(tmp, 'diff-revs'), revs.join(' '))
    },
    async run(s, tmp) {
      const [a, b] = fs.readFileSync(path.join(tmp, 'diff-revs'), 'utf8').split(' ')
      const statuses: number[] = []
      for (let i = 0; i < DIFF_REQUESTS; i++)
        statuses.push((await api(s, 'GET', `/simple-rules/Big.Diff/diff?from=${a}&to=${b}`)).status)
      return `diff statuses ${statuses.join(',')}`
    },
  },
  // Finding 10: a rule with a unique dedup and a ~44 KB alert context, over 3,000 records.
  amplify: {
    size: `a Python rule (unique dedup, ~44 KB alert_context) matching ${HOSTILE_RECORDS.toLocaleString('en')} posted records (30 deliveries of 100)`,
    async setup(s) {
      await pythonRule(
        s,
        'Attack.Amplify',
        [
          'def rule(event):',
          '    return event.get("user_email") == "amplify@example.com"',
          '',
          'def dedup(event):',
          '    return str(event.get("metadata", {}).get("id"))',
          '',
          'def alert_context(event):',
          '    i = str(event.get("metadata", {}).get("id"))',
          '    return {"items": ["record " + i + " item " + str(j) + " " + "x" * 55 for j in range(400)]}',
          '',
        ].join('\n'),
      )
    },
    run: (s) => postHostile(s, 'amplify@example.com', HOSTILE_RECORDS),
  },
  // Finding 11: a rule raising a 60 KiB exception message on every record, over 3,000 records.
  exception: {
    size: `a Python rule raising a 60 KiB message on ${HOSTILE_RECORDS.toLocaleString('en')} posted records (30 deliveries of 100)`,
    async setup(s) {
      await pythonRule(
        s,
        'Attack.Raise',
        [
          'def rule(event):',
          '    if event.get("user_email") == "raise@example.com":',
          '        raise ValueError("e" * 61440)',
          '    return False',
          '',
        ].join('\n'),
      )
    },
    run: (s) => postHostile(s, 'raise@example.com', HOSTILE_RECORDS),
  },
  // Finding 12: one commit of 50,000 files (one in ten an invalid rule), then one POST /reconcile.
  manyfiles: {
    size: `one commit of ${BULK_FILES.toLocaleString('en')} files (5,000 invalid rules, 45,000 other YAML) written into the repository, then POST /reconcile`,
    async run(s) {
      const gitdir = path.join(s.dataDir, 'repo.git')
      const head = (await git(s.dataDir, '--git-dir', gitdir, 'rev-parse', 'main')).trim()
      const invalid = 'AnalysisType: rule\nSeverity: Nope\nDetection: []\n'
      const other = 'note: not an analysis file\n'
      const blobs = [invalid, other].map((b, i) => `blob\nmark :${i + 1}\ndata ${b.length}\n${b}\n`).join('')
      const entries: string[] = []
      for (let i = 0; i < BULK_FILES; i++)
        entries.push(`M 100644 :${i % 10 === 0 ? 1 : 2} simple_rules/bulk/b${i % 50}/f${i}.yml\n`)
      const commit = `commit refs/heads/main\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 5\nbulk\nfrom ${head}\n`
      const child = run('git', ['--git-dir', gitdir, 'fast-import', '--quiet'])
      child.child.stdin!.end(`${blobs}${commit}${entries.join('')}`)
      await child
      return reconcile(s)
    },
  },
}
