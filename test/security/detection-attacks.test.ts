// Attacks by rule code on live detection, through the real ingest path: records POSTed to a real
// server's log-source route, Python streaming rules run in the real sandboxed pool (bubblewrap,
// seccomp, real python3), alerts delivered to real receivers on 127.0.0.1. Rule code tries to read
// the server's secrets (environment, data directory, tokens, stored logs, other rules' files), write
// files, reach the network, forge result frames on the result pipe (fd 3) with values the runtime
// never reports (a severity that is not one, an over-long title, a context that is not an object or
// nested a million deep, destinations that are not names, a line of megabytes, markers for records
// it was not given), print frames to stdout, exhaust memory or fork, and return ill-typed values
// from its alert functions, or sleep just under the per-record clock on every record. Each must leave the server and detection up, other rules' results true,
// and no secret anywhere.
// Real port: a remote (the receivers and the trap the sandbox tries to reach; the service runs in process).
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { TOKEN } from '../ingest/helpers.js'
import { commandRecord, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const DEST_SECRET = 'hmac-secret-7f3c1a9e5b2d'
const BOOTSTRAP = 'rk-bootstrap-attack-0123456789abcdef'
const cmd = (name: string, ts: string) => commandRecord('atk', name, ts)

const alertsOf = async (s: InProcessServer, ruleId: string) => {
  const res = await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)
  if (res.status !== 200) throw new Error(`alerts: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body.results as any[]
}
const errorsOf = async (s: InProcessServer, ruleId: string) => {
  const res = await s.request('GET', `/rule-errors?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)
  if (res.status !== 200) throw new Error(`rule errors: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body.results as any[]
}

/** How many records the rule matched (alerts group matches). */
const matchCount = async (s: InProcessServer, ruleId: string) =>
  (
    await s.server.detection.store.readMatches(
      Date.parse('2026-11-01T00:00:00Z'),
      Date.parse('2026-12-01T00:00:00Z'),
      (m) => m.ruleId === ruleId,
    )
  ).length

async function pyRule(s: InProcessServer, id: string, body: string, extra: Record<string, unknown> = {}) {
  const res = await s.request('POST', '/rules', { ...SAMPLE_BODIES.python(id, { body, tests: [] }), ...extra })
  if (res.status !== 200) throw new Error(`rule ${id}: ${res.status} ${res.text}`)
}

/** The first lines of rule(): records whose command name is not `name` do not match. */
const only = (name: string) =>
  `    if event.deep_get("team_command", "command_name") != ${JSON.stringify(name)}:\n        return False\n`
const matchCommand = (name: string) => `def rule(event):\n${only(name)}    return True\n`

/** Detection is running and its checkpoint is not failed. */
async function detectionUp(t: Test, s: InProcessServer): Promise<void> {
  const st = await s.request('GET', '/status')
  t.equal(st.status, 200)
  t.equal(st.body.detection.failed, false, 'detection has not failed')
}

t.test('rule code attacking live detection', async (t) => {
  const hook: Receiver = await startReceiver()
  const trap: Receiver = await startReceiver()
  t.teardown(() => Promise.all([hook.close(), trap.close()]))
  const dataDir = tempDir('rk-detect-attack-')
  const logLines: string[] = []
  const s = await startInProcess({
    dataDir,
    logLines,
    env: { ...DETECT_ENV, RULEKEEPER_DEST_HOOK_SECRET: DEST_SECRET, RULEKEEPER_BOOTSTRAP_TOKEN: BOOTSTRAP },
    config: {
      python: { timeoutMs: 3000 },
      destinations: [
        { id: 'hook', type: 'webhook', url: hook.url, secretEnv: 'RULEKEEPER_DEST_HOOK_SECRET', severities: [] },
      ],
    },
  })
  t.teardown(() => s.close())
  await pyRule(s, 'Atk.Beside', matchCommand('beside'))

  await t.test('secrets, the data directory and the network are out of reach', async (t) => {
    const trapPort = new URL(trap.url).port
    await pyRule(
      s,
      'Atk.Spy',
      `import os, socket, glob


def probe(f):
    try:
        return repr(f())[:2000]
    except BaseException as exc:
        return "refused: " + type(exc).__name__


def rule(event):
${only('spy')}    return True


def alert_context(event):
    data = ${JSON.stringify(dataDir)}
    out = {"environ": dict(os.environ), "cwd": os.getcwd()}
    for name in ("tokens.json", "bootstrap-token", "token-usage.json", "config.yml", "logs", "repo.git", "pwned"):
        out["read " + name] = probe(lambda: open(os.path.join(data, name)).read())
        out["list " + name] = probe(lambda: os.listdir(os.path.join(data, name)))
    out["proc environ"] = probe(lambda: open("/proc/1/environ", "rb").read())
    out["parent environ"] = probe(lambda: open("/proc/%d/environ" % os.getppid(), "rb").read())
    out["files"] = probe(lambda: glob.glob("/*") + glob.glob("/*/*") + glob.glob("/tmp/**", recursive=True))
    out["write data dir"] = probe(lambda: open(os.path.join(data, "pwned"), "w").write("x"))
    out["write tmp"] = probe(lambda: open("/tmp/pwned", "w").write("x"))
    out["connect"] = probe(lambda: socket.create_connection(("127.0.0.1", ${trapPort}), timeout=1))
    return out


def destinations(event):
    # a URL is no destination id: only configured destinations are ever posted to
    return [${JSON.stringify(trap.url)}, "http://127.0.0.1:${trapPort}/x", "hook"]
`,
      { outputIDs: ['hook'] },
    )
    await sendAndDetect(s, [cmd('spy', '2026-11-20T10:00:00Z'), cmd('beside', '2026-11-20T10:00:01Z')])
    const [alert] = await alertsOf(s, 'Atk.Spy')
    t.ok(alert, 'the spying rule matched (its alert_context ran)')
    const context = alert.alertContext
    // bwrap sets PWD and Python's C locale coercion LC_CTYPE; nothing of the server's comes in
    t.same(
      Object.keys(context.environ).filter((k) => k !== 'PWD' && k !== 'LC_CTYPE'),
      [],
      'the rule sees an empty environment',
    )
    const text = JSON.stringify(alert)
    for (const secret of [DEST_SECRET, BOOTSTRAP, TOKEN])
      t.notOk(text.includes(secret), `no secret (${secret.slice(0, 8)}…) in what the rule saw`)
    for (const name of ['tokens.json', 'bootstrap-token', 'token-usage.json', 'logs', 'repo.git'])
      t.match(context[`read ${name}`], /^refused: /, `${name} is not there to read`)
    for (const part of ['Atk', 'repo.git', 'tokens.json', path.basename(dataDir)])
      t.notOk(String(context.files).includes(part), `no ${part} in the sandbox's file system`)
    t.match(context['write data dir'], /^refused: /)
    t.match(context.connect, /^refused: /, 'no socket')
    t.notOk(fs.existsSync(path.join(dataDir, 'pwned')), 'nothing written into the data directory')
    t.notOk(fs.existsSync('/tmp/pwned'), 'nothing written to the host /tmp')
    await new Promise((r) => setTimeout(r, 300)) // wait: the trap receiver gets nothing within 300 ms
    t.equal(trap.got.length, 0, 'the local receiver got nothing (neither from the sandbox nor as a destination)')
    await hook.until(() => hook.acked().size >= 1, 'the alert delivered')
    t.same(
      alert.destinations.map((d: any) => d.id),
      ['hook'],
      'destinations() naming URLs routes only to the configured id it named',
    )
    for (const r of hook.got) {
      t.notOk(r.body.includes(DEST_SECRET), 'the HMAC key is not in the delivered body')
      t.match(r.signature, /^sha256=[0-9a-f]{64}$/, 'the body is signed with it')
    }
    t.equal(trap.got.length, 0, 'the alert was delivered, and never to a URL the rule named')
    const status = await s.request('GET', '/status')
    t.notOk(status.text.includes(DEST_SECRET), 'not in /status')
    const metrics = await s.request('GET', '/metrics')
    t.notOk(metrics.text.includes(DEST_SECRET), 'not in /metrics')
    t.ok(logLines.length > 0, 'the server logged')
    t.notOk(
      logLines.some((l) => l.includes(DEST_SECRET) || l.includes(BOOTSTRAP)),
      'no secret in the server log',
    )
    t.equal(await matchCount(s, 'Atk.Beside'), 1, 'the rule beside it matched its record')
  })

  await t.test('forged result frames with values the runtime never reports are refused', async (t) => {
    // A frame per record past the runtime's checks, then False (the runtime reports nothing more).
    const frame = JSON.stringify({
      t: 'r',
      f: {
        detection: [true, null],
        severity: ['URGENT', null],
        title: ['T'.repeat(5000), null],
        dedup: [{ toString: 1 }, null],
        alertContext: [[1, 2, 3], null],
        description: [{ html: '<script>' }, null],
        destinations: [{ hook: 1 }, null],
      },
    })
    await pyRule(
      s,
      'Atk.Forge',
      `import os


def rule(event):
${only('forge')}    os.write(3, ${JSON.stringify(frame)}.encode() + b"\\n")
    return False
`,
    )
    await sendAndDetect(s, [cmd('forge', '2026-11-20T10:01:00Z'), cmd('beside', '2026-11-20T10:01:01Z')])
    const [alert] = await alertsOf(s, 'Atk.Forge')
    t.ok(alert, 'the forged match stands (rule code decides its own matches)')
    t.equal(alert.severity, 'LOW', 'the rule’s Severity, not the forged one')
    t.equal(alert.title, 'T'.repeat(1000), 'the title cut to 1,000 characters, as the runtime cuts it')
    t.same(alert.alertContext, {}, 'no array as the context')
    t.notOk('description' in alert && typeof alert.description !== 'string', 'no object as the description')
    const errors = await errorsOf(s, 'Atk.Forge')
    t.equal(errors.length, 5, 'an error of each ill-typed forged function at the record')
    const said = errors.map((e) => e.error).join('\n')
    for (const fn of ['severity()', 'dedup()', 'alert_context()', 'description()', 'destinations()'])
      t.match(said, `${fn}: reported a`, `${fn} named in the errors`)
    t.equal(await matchCount(s, 'Atk.Beside'), 2, 'the rule beside it gets its true verdict')
  })

  await t.test('a result line of megabytes stops the forger’s run; the next record is evaluated', async (t) => {
    await pyRule(
      s,
      'Atk.Huge',
      `import os


def rule(event):
    name = event.deep_get("team_command", "command_name")
    if name == "huge":
        os.write(3, b'{"t":"r","f":{"detection":[true,null],"title":["' + b"T" * 3000000 + b'",null]}}\\n')
        return False
    return name == "after-huge"
`,
    )
    await sendAndDetect(s, [cmd('huge', '2026-11-20T10:02:00Z'), cmd('after-huge', '2026-11-20T10:02:01Z')])
    const errors = await errorsOf(s, 'Atk.Huge')
    t.equal(errors.length, 1)
    t.match(errors[0].error, /result line longer than \d+ characters/)
    const alerts = await alertsOf(s, 'Atk.Huge')
    t.equal(alerts.length, 1, 'only the honest match of the next record')
    t.ok(JSON.stringify(alerts).length < 10_000, 'nothing of megabytes stored')
  })

  await t.test('a context nested 60,000 deep is refused; detection and the alert API stay up', async (t) => {
    await pyRule(
      s,
      'Atk.Deep',
      `import os


def rule(event):
${only('deep')}    n = 60000  # the line stays under the per-record cap; JSON.stringify overflows at 10,000
    os.write(3, b'{"t":"r","f":{"detection":[true,null],"alertContext":[{"a":' + b"[" * n + b"]" * n + b'},null]}}\\n')
    return False
`,
    )
    // An honest context 900 levels deep (within Python's own recursion limit) is kept and delivered.
    await pyRule(
      s,
      'Atk.DeepHonest',
      `def rule(event):
${only('deep')}    return True


def alert_context(event):
    v = []
    for _ in range(898):
        v = [v]
    return {"a": v}
`,
      { outputIDs: ['hook'] },
    )
    await sendAndDetect(s, [cmd('deep', '2026-11-20T10:03:00Z')])
    await detectionUp(t, s)
    const [forged] = await alertsOf(s, 'Atk.Deep')
    t.same(forged.alertContext, {}, 'the forged context is dropped')
    t.match((await errorsOf(s, 'Atk.Deep'))[0].error, /alert_context\(\).*nested at most 1000/)
    const [honest] = await alertsOf(s, 'Atk.DeepHonest')
    let depth = 0
    for (let v = honest.alertContext.a; Array.isArray(v); v = v[0]) depth++
    t.equal(depth, 899, 'the honest deep context is kept whole')
    await hook.until(() => hook.got.some((r) => r.key === honest.id), 'the deep alert delivered')
    await sendAndDetect(s, [cmd('beside', '2026-11-20T10:03:01Z')])
    t.equal(await matchCount(s, 'Atk.Beside'), 3, 'the next batch is detected')
  })

  await t.test('forged markers and frames for other records stay within the forger’s own run', async (t) => {
    // On its first record, the rule claims matches for the next three (and a `done`): the runtime's own
    // next marker is then out of order and the run is stopped; no other rule's results change.
    await pyRule(
      s,
      'Atk.Markers',
      `import os


def rule(event):
${only('mark')}    for i in range(1, 4):
        os.write(3, b'{"t":"test","i":%d}\\n{"t":"r","f":{"detection":[true,null],"title":["forged",null]}}\\n' % i)
    os.write(3, b'{"t":"done"}\\n')
    return False
`,
    )
    await pyRule(s, 'Atk.Victim', 'def rule(event):\n    return False\n')
    await sendAndDetect(s, [
      cmd('mark', '2026-11-20T10:04:00Z'),
      cmd('beside', '2026-11-20T10:04:01Z'),
      cmd('beside', '2026-11-20T10:04:02Z'),
      cmd('beside', '2026-11-20T10:04:03Z'),
    ])
    t.same(await alertsOf(s, 'Atk.Victim'), [], 'another rule gets no forged alert')
    t.same(await errorsOf(s, 'Atk.Victim'), [], 'nor an error')
    t.equal(await matchCount(s, 'Atk.Beside'), 6, 'the rule beside it saw all three records')
    for (const a of await alertsOf(s, 'Atk.Markers')) t.equal(a.ruleId, 'Atk.Markers')
    await detectionUp(t, s)
  })

  await t.test('frames printed to stdout and stderr are not read as results', async (t) => {
    const frame = '{"t":"r","f":{"detection":[true,null],"title":["printed",null]}}'
    await pyRule(
      s,
      'Atk.Print',
      `import os, sys


def rule(event):
${only('print')}    print(${JSON.stringify(frame)})
    print(${JSON.stringify(frame)}, file=sys.stderr)
    os.write(1, b${JSON.stringify(`${frame}\n`)})
    os.write(2, b${JSON.stringify(`${frame}\n`)})
    return False
`,
    )
    await sendAndDetect(s, [cmd('print', '2026-11-20T10:05:00Z')])
    t.same(await alertsOf(s, 'Atk.Print'), [], 'no alert from printed frames')
    t.same(await errorsOf(s, 'Atk.Print'), [], 'no error either: printing is allowed')
  })

  await t.test('memory and process exhaustion are errors of the record; the pool recovers', async (t) => {
    await pyRule(
      s,
      'Atk.Exhaust',
      `import os


def rule(event):
    name = event.deep_get("team_command", "command_name")
    if name == "membomb":
        hog = [bytearray(64 * 1024 * 1024) for _ in range(1000)]
        return len(hog) > 0
    if name == "forkbomb":
        while True:
            os.fork()
    return name == "after-bomb"
`,
    )
    const started = Date.now()
    await sendAndDetect(s, [
      cmd('membomb', '2026-11-20T10:06:00Z'),
      cmd('forkbomb', '2026-11-20T10:06:01Z'),
      cmd('after-bomb', '2026-11-20T10:06:02Z'),
      cmd('beside', '2026-11-20T10:06:03Z'),
    ])
    t.ok(Date.now() - started < 15_000, `bounded (${Date.now() - started} ms)`)
    const errors = await errorsOf(s, 'Atk.Exhaust')
    t.equal(errors.length, 2, 'an error at each bomb')
    t.equal((await alertsOf(s, 'Atk.Exhaust')).length, 1, 'the record after them matched')
    t.equal(await matchCount(s, 'Atk.Beside'), 7, 'the rule beside it saw the batch')
    await detectionUp(t, s)
  })

  await t.test(
    'a rule sleeping just under the per-record clock on every record holds detection boundedly',
    async (t) => {
      // 12 records × 2.5 s would hold every rule's detection for 30 s; the rule's budget for the
      // batch (detection.python.budgetMs, by default one record's clock: 3 s here) stops it before
      // the third record, and the rest are errors (it was 3 × 3 s + 10 ms per record: 9,130 ms).
      await pyRule(
        s,
        'Atk.Slow',
        `import time


def rule(event):
${only('slow')}    time.sleep(2.5)
    return True
`,
      )
      const started = Date.now()
      await sendAndDetect(s, [
        ...Array.from({ length: 12 }, (_, i) => cmd('slow', `2026-11-20T10:08:${String(i).padStart(2, '0')}Z`)),
        cmd('beside', '2026-11-20T10:08:30Z'),
      ])
      const ms = Date.now() - started
      t.ok(ms < 9_000, `detection held ${ms} ms, not 12 × 2.5 s`)
      t.equal(await matchCount(s, 'Atk.Slow'), 2, 'the records within the budget matched')
      const errors = await errorsOf(s, 'Atk.Slow')
      t.equal(errors.length, 11, 'an error at each record past the budget (the 13th record’s too)')
      t.ok(
        errors.every((e) => /used up its budget of 3000 ms for this batch/.test(e.error)),
        'each names the batch budget',
      )
      t.equal(await matchCount(s, 'Atk.Beside'), 8, 'the rule beside it saw its record')
      await detectionUp(t, s)
    },
  )

  await t.test('ill-typed returns from the alert functions fall back, each an error', async (t) => {
    await pyRule(
      s,
      'Atk.Types',
      `class Evil:
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


def rule(event):
${only('types')}    return True


def title(event):
    return b"bytes"


def dedup(event):
    return 5


def severity(event):
    return "URGENT"


def alert_context(event):
    return {"evil": Evil(), "set": {1, 2}, "nan": float("nan")}


def destinations(event):
    raise Evil.__new__(type("Boom", (Exception,), {"__str__": lambda self: 1 / 0}))
`,
      { outputIDs: ['hook'] },
    )
    await sendAndDetect(s, [cmd('types', '2026-11-20T10:07:00Z')])
    const [alert] = await alertsOf(s, 'Atk.Types')
    t.ok(alert, 'the match stands')
    t.equal(alert.title, 'Rule Atk.Types')
    t.equal(alert.severity, 'LOW')
    t.same(
      alert.destinations.map((d: any) => d.id),
      ['hook'],
      'OutputIds route it (destinations() raised)',
    )
    const said = (await errorsOf(s, 'Atk.Types')).map((e) => e.error).join('\n')
    for (const fn of ['title()', 'dedup()', 'severity()', 'destinations()'])
      t.match(said, fn, `${fn} named in the errors`)
    await detectionUp(t, s)
  })
})
