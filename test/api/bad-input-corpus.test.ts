// Bad-input corpus: at least 10,000 generated malformed requests (seeded; RK_CORPUS_SEED=<n> replays
// a run) against a real in-process server with a log source. Each must answer its exact 4xx with a
// JSON `message` (validation 400s also list `errors`); the server keeps serving, never answers 5xx,
// the repository and the log store stay unchanged, `git fsck --strict` stays clean, RSS stays bounded.
// Real port: raw header bytes or lying lengths (malformed requests on a socket) and the memory of a real server.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import zlib from 'node:zlib'
import { spawnSync } from 'node:child_process'
import v8 from 'node:v8'
import vm from 'node:vm'
import t from 'tap'
import { TokenStore } from '../../src/auth/token-store.js'
import { parseJsonOrUndefined, SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { SeededRandom as Rng } from '../helpers/seeded-random.js'

type Kind = 'correlation' | 'scheduled' | 'simple'
const KIND_PATH: Record<Kind, string> = {
  correlation: '/correlation-rules',
  scheduled: '/scheduled-rules',
  simple: '/simple-rules',
}
const KINDS: Kind[] = ['correlation', 'scheduled', 'simple']
const MiB = 1024 * 1024
const AUDIT_TOKEN = 'corpus-audit-secret-0123456789'

// ---------------------------------------------------------------------------------------------
// Small helpers (the seeded PRNG, mulberry32, is test/helpers/seeded-random.ts).

type Json = any
const clone = (v: Json): Json => JSON.parse(JSON.stringify(v))
/** Sets an own property even for `__proto__` (plain assignment would set the prototype). */
function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
}
/** A JSON text token the serializer cannot produce (`1e400`, 10,000 brackets): a marker replaced after stringify. */
const rawTexts: string[] = []
const RAW = (text: string) => `\u0001RAW:${rawTexts.push(text) - 1}\u0001`
function toJsonText(v: Json): string {
  return JSON.stringify(v).replace(/"\\u0001RAW:(\d+)\\u0001"/g, (_m, i: string) => rawTexts[Number(i)]!)
}
const ptr = (k: string) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`

// ---------------------------------------------------------------------------------------------
// The writable fields of each kind as api.md lists them (not read from src/, so a field the
// server forgot is noticed), with the type that decides which values are wrong.

type FieldType =
  | 'id'
  | 'severity'
  | 'string'
  | 'nonEmptyString'
  | 'boolean'
  | 'posInt'
  | 'strList'
  | 'reports'
  | 'yamlList'
  | 'title'
  | 'pyTests'
  | 'corrTests'
const COMMON: Record<string, FieldType> = {
  id: 'id',
  severity: 'severity',
  createAlert: 'boolean',
  dedupPeriodMinutes: 'posInt',
  threshold: 'posInt',
  description: 'string',
  displayName: 'string',
  reference: 'string',
  runbook: 'string',
  enabled: 'boolean',
  outputIDs: 'strList',
  reports: 'reports',
  summaryAttributes: 'strList',
  tags: 'strList',
}
const WRITABLE: Record<Kind, Record<string, FieldType>> = {
  correlation: { ...COMMON, detection: 'yamlList', tests: 'corrTests' },
  scheduled: { ...COMMON, managed: 'boolean', body: 'nonEmptyString', scheduledQueries: 'strList', tests: 'pyTests' },
  simple: {
    ...COMMON,
    managed: 'boolean',
    detection: 'yamlList',
    logTypes: 'strList',
    inlineFilters: 'yamlList',
    alertTitle: 'title',
    alertContext: 'yamlList',
    dynamicSeverities: 'yamlList',
    groupBy: 'yamlList',
    tests: 'pyTests',
  },
}
const REQUIRED: Record<Kind, string[]> = {
  correlation: ['id', 'severity', 'detection'],
  scheduled: ['id', 'severity', 'body'],
  simple: ['id', 'severity', 'detection'],
}
/** Read-only fields (ignored in a write body), so never used as "unknown" fields. */
const READ_ONLY: Record<Kind, string[]> = {
  correlation: [
    'managed',
    'logTypes',
    'correlationRuleReferenceIds',
    'createdAt',
    'lastModified',
    'createdBy',
    'lastModifiedBy',
    'createdByExternal',
    'warnings',
  ],
  scheduled: ['createdAt', 'lastModified', 'createdBy', 'lastModifiedBy', 'createdByExternal', 'warnings'],
  simple: ['pythonBody', 'createdAt', 'lastModified', 'createdBy', 'lastModifiedBy', 'createdByExternal', 'warnings'],
}
/** Text fields of YAML lists where a deep or exploding document must be refused (not alertTitle: a title is taken literally). */
const YAML_FIELDS: Record<Kind, string[]> = {
  correlation: ['detection'],
  scheduled: [],
  simple: ['detection', 'inlineFilters', 'alertContext', 'dynamicSeverities', 'groupBy'],
}

const pyTest = (extra: Record<string, unknown> = {}) => ({
  name: 'a',
  expectedResult: true,
  log: { eventName: 'x' },
  ...extra,
})
const corrTest = (extra: Record<string, unknown> = {}) => ({
  name: 'a',
  expectedResult: true,
  ruleOutputs: [{ id: 'Failures' }],
  ...extra,
})

function wrongValues(type: FieldType): unknown[] {
  const nonString = [1, 1.5, true, false, null, [], {}, ['x'], { a: 'b' }]
  switch (type) {
    case 'id':
      return [1, 0, true, null, [], {}, ['Rule.A'], { id: 'Rule.A' }]
    case 'severity':
      return [
        'high',
        'Critical',
        'NOPE',
        '',
        ' HIGH',
        'HIGH ',
        'INFO\u0000',
        'MEDIUM,HIGH',
        1,
        null,
        true,
        ['HIGH'],
        { HIGH: true },
      ]
    case 'string':
    case 'title':
      return nonString
    case 'nonEmptyString':
      return ['', ...nonString]
    case 'yamlList':
      return ['', ...nonString]
    case 'boolean':
      return ['true', 'false', 'yes', 'True', 1, 0, null, [], {}, [true]]
    case 'posInt':
      return [
        '1',
        '60',
        1.5,
        0.1,
        0,
        -1,
        -60,
        true,
        null,
        [],
        {},
        [1],
        RAW('1e400'),
        RAW('-1e400'),
        RAW('1e-400'),
        RAW('2.5'),
      ]
    case 'strList':
      return ['a', 'a,b', 1, null, true, {}, { 0: 'a' }, [1], [null], [true], [['a']], [{}], ['a', 2]]
    case 'reports':
      return [[], ['a'], 'x', 1, null, true, { a: 'b' }, { a: [1] }, { a: null }, { a: [['x']] }, { a: 'x', b: ['y'] }]
    case 'pyTests':
      return [
        'x',
        1,
        null,
        {},
        [1],
        [null],
        ['x'],
        [{}],
        [[]],
        [{ name: 'a', expectedResult: true }],
        [{ expectedResult: true, log: {} }],
        [pyTest({ name: '' })],
        [pyTest({ name: 1 })],
        [pyTest({ expectedResult: 'true' })],
        [pyTest({ expectedResult: null })],
        [pyTest({ extra: 1 })],
        [pyTest({ mocks: 'x' })],
        [pyTest({ mocks: {} })],
        [pyTest({ mocks: [{ objectName: 'x' }] })],
        [pyTest({ mocks: [{ objectName: 'x', returnValue: 1 }] })],
        [pyTest({ mocks: [{ objectName: '', returnValue: 'a' }] })],
        [pyTest({ mocks: [{ objectName: 'x', returnValue: 'y', extra: 1 }] })],
        [pyTest({ resource: 1 })],
        [pyTest(), pyTest({ expectedResult: 2 })],
      ]
    case 'corrTests':
      return [
        'x',
        1,
        null,
        {},
        [1],
        [{}],
        [{ name: 'a', expectedResult: true }],
        [corrTest({ ruleOutputs: 'x' })],
        [corrTest({ ruleOutputs: [{}] })],
        [corrTest({ ruleOutputs: [{ id: '' }] })],
        [corrTest({ ruleOutputs: [{ id: 1 }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', matches: 'x' }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', matches: { f: 'x' } }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', matches: { f: { v: [1.5] } } }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', matches: { f: { v: [true] } } }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', matches: { f: { v: 'x' } } }] })],
        [corrTest({ ruleOutputs: [{ id: 'a', extra: 1 }] })],
        [corrTest({ expectedResult: 'yes' })],
        [corrTest({ name: '' })],
        [corrTest({ log: {} })],
      ]
  }
}

// ---------------------------------------------------------------------------------------------
// A case and how it is sent.

type Auth = 'manage' | 'view' | 'manageOnly' | 'none' | { key: string }
interface Case {
  cat: string
  method: string
  path: string
  auth: Auth
  headers?: Record<string, string>
  /** Bytes of the body; a function for the big ones, made only when sent. */
  body?: Buffer | string | (() => Buffer)
  /** Send without Content-Length (chunked). */
  chunked?: boolean
  /** Omit the default Content-Type: application/json. */
  noContentType?: boolean
  status: number
  /** A validation 400: `errors` must list this pointer (or one below it); '*' = any. */
  errorPath?: string
  /** The error at errorPath carries line and column. */
  located?: boolean
}

interface Sent {
  status: number
  text: string
  body: any
  headers: http.IncomingHttpHeaders
  error?: string
}

interface Tokens {
  manage: string
  view: string
  manageOnly: string
}

/**
 * Sends a case. A request whose connection dies before any answer is sent once more on a fresh
 * connection. On a reused keep-alive socket this is the known race with the server's idle timer
 * (in one process under load it is real); on a new socket it is rarer and unexplained, so those
 * are counted apart and printed. The corpus is made of requests that must change nothing, so
 * resending is safe; a request that fails twice is a failure, and resends are bounded.
 */
async function sendCase(
  base: URL,
  agent: http.Agent,
  tokens: Tokens,
  c: Case,
  stats?: { retries: number; freshResets: string[] },
): Promise<Sent> {
  const r = await sendOnce(base, agent, tokens, c)
  if (!r.retryable) return r
  if (stats) {
    stats.retries++
    if (!r.error?.includes('reused')) stats.freshResets.push(`${c.cat} ${c.method} ${c.path.slice(0, 80)}: ${r.error}`)
  }
  const again = await sendOnce(base, false, tokens, c)
  return again.error ? { ...again, error: `${again.error} (resent on a fresh connection after: ${r.error})` } : again
}

function sendOnce(
  base: URL,
  agent: http.Agent | false,
  tokens: Tokens,
  c: Case,
): Promise<Sent & { retryable?: boolean }> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...(c.headers ?? {}) }
    const key = c.auth === 'none' ? undefined : typeof c.auth === 'object' ? c.auth.key : tokens[c.auth]
    if (key !== undefined) headers['X-API-Key'] = key
    const raw = typeof c.body === 'function' ? c.body() : c.body
    const buf = raw === undefined ? undefined : typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw
    if (buf !== undefined) {
      if (!c.noContentType && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['Content-Type'] = 'application/json'
      // Node's client frames a DELETE body only when told to (it would send it raw otherwise).
      if (c.chunked) headers['Transfer-Encoding'] = 'chunked'
      else headers['Content-Length'] = String(buf.length)
    }
    let settled = false
    let answered = false
    const done = (s: Sent & { retryable?: boolean }) => {
      if (settled) return
      settled = true
      resolve(s)
    }
    let req: http.ClientRequest
    try {
      req = http.request(
        { host: base.hostname, port: base.port, method: c.method, path: c.path, headers, agent },
        (res) => {
          answered = true
          const chunks: Buffer[] = []
          let size = 0
          res.on('data', (d: Buffer) => {
            if (size >= 4 * MiB) return
            chunks.push(d)
            size += d.length
          })
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            done({ status: res.statusCode ?? 0, text, body: parseJsonOrUndefined(text), headers: res.headers })
          })
          res.on('error', (err) =>
            done({ status: 0, text: '', body: undefined, headers: {}, error: `response: ${err.message}` }),
          )
        },
      )
    } catch (err) {
      return done({
        status: 0,
        text: '',
        body: undefined,
        headers: {},
        error: `request not sent: ${(err as Error).message}`,
      })
    }
    req.setTimeout(30_000, () => req.destroy(new Error('timed out after 30 s')))
    // A server may answer before it has read the body (401, 403, 413); a write error after that is fine.
    req.on('error', (err) => {
      const retryable = ['ECONNRESET', 'EPIPE'].includes((err as NodeJS.ErrnoException).code ?? '')
      if (!answered)
        done({
          status: 0,
          text: '',
          body: undefined,
          headers: {},
          error: `${err.message}${req.reusedSocket ? ' on a reused socket' : ' on a new socket'}`,
          retryable,
        })
    })
    if (buf === undefined) req.end()
    else if (c.chunked) {
      const step = 256 * 1024
      let off = 0
      const pump = () => {
        while (off < buf.length) {
          const part = buf.subarray(off, off + step)
          off += step
          if (!req.write(part)) return void req.once('drain', pump)
        }
        req.end()
      }
      pump()
    } else req.end(buf)
  })
}

/** Why a response is wrong for its case, or undefined when it is right. */
function judge(c: Case, r: Sent, secrets: string[]): string | undefined {
  if (r.error) return `no response: ${r.error}`
  if (r.status !== c.status) return `status ${r.status}, expected ${c.status}`
  if (r.status < 400 || r.status > 499) return `status ${r.status} is not a 4xx`
  if (!r.headers['x-request-id']) return 'no X-Request-Id header'
  if (c.method === 'HEAD') return undefined
  if (!/^application\/json/.test(String(r.headers['content-type']))) return `content-type ${r.headers['content-type']}`
  if (!r.body || typeof r.body !== 'object' || typeof r.body.message !== 'string' || r.body.message.trim() === '')
    return 'no non-empty message'
  if (/\n\s+at |node_modules|\.ts:\d+/.test(r.text)) return 'the body leaks a stack trace or source path'
  for (const s of secrets) if (s && r.text.includes(s)) return 'the body leaks a secret or the data directory'
  if (c.errorPath !== undefined) {
    const errs = r.body.errors
    if (!Array.isArray(errs) || errs.length === 0) return 'a validation 400 without an errors list'
    for (const e of errs) {
      if (!e || typeof e.path !== 'string' || typeof e.message !== 'string' || e.message === '')
        return `malformed errors item ${JSON.stringify(e)}`
    }
    if (c.errorPath !== '*') {
      const hit = errs.find((e: { path: string }) => e.path === c.errorPath || e.path.startsWith(`${c.errorPath}/`))
      if (!hit) return `errors do not name ${c.errorPath}`
      if (
        c.located &&
        !(Number.isInteger(hit.line) && hit.line >= 1 && Number.isInteger(hit.column) && hit.column >= 1)
      )
        return `the error at ${c.errorPath} has no line and column`
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The generators, one per category.

interface World {
  existing: Record<Kind, string>
  revoked: string
  expired: string
  bootstrap: string
}

const VALID_WRITE_QUERIES = [
  '',
  '?run-tests-first=false',
  '?run-tests-only=true',
  '?run-tests-first=true&run-tests-only=false',
]

function newId(rng: Rng): string {
  return `Corpus.${rng.str(10)}`
}
function baseBody(kind: Kind, id: string): Record<string, unknown> {
  return clone(SAMPLE_BODIES[kind](id))
}
/** POST, or PUT to the body's own id (so that the id matches and only the intended defect is wrong). */
function writeTo(
  rng: Rng,
  kind: Kind,
  id: unknown,
  _world: World,
  preferPost = false,
): { method: string; path: string } {
  const q = rng.pick(VALID_WRITE_QUERIES)
  if (preferPost || typeof id !== 'string' || rng.bool()) return { method: 'POST', path: `${KIND_PATH[kind]}${q}` }
  return { method: 'PUT', path: `${KIND_PATH[kind]}/${encodeURIComponent(id)}${q}` }
}
/** A body with one defect is applied to a new id or, a third of the time, to an existing rule. */
function targetId(rng: Rng, kind: Kind, world: World): string {
  return rng.bool(1 / 3) ? world.existing[kind] : newId(rng)
}

function genJsonSyntax(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  const nonStandard: Array<(text: string) => string> = [
    (s) => s.replace(/"severity":"[A-Z]+"/, '"severity":NaN'),
    (s) => s.replace(/"severity":"[A-Z]+"/, '"severity":Infinity'),
    (s) => s.replace(/"severity":"([A-Z]+)"/, '"severity":\'$1\''),
    (s) => s.replace(/"id":"([^"]*)"/, "'id':'$1'"),
    (s) => s.replace(/"id":/, 'id:'),
    (s) => s.replace(/}$/, ',}'),
    (s) => s.replace(/\]/, ',]'),
    (s) => s.replace(/^\{/, '{// comment\n'),
    (s) => s.replace(/^\{/, '{/* c */'),
    (s) => s.replace(/^\{/, '{"threshold":0x10,'),
    (s) => s.replace(/^\{/, '{"threshold":01,'),
    (s) => s.replace(/^\{/, '{"threshold":+1,'),
    (s) => s.replace(/^\{/, '{"threshold":.5,'),
    (s) => s.replace(/^\{/, '{"threshold":1.,'),
    (s) => s.replace(/^\{/, '{"enabled":True,'),
    (s) => s.replace(/^\{/, '{"enabled":undefined,'),
    (s) => s.replace(/^\{/, '{"tags":[,],'),
    (s) => s.replace(/^\{/, '{"displayName":"a\tb",'),
    (s) => s.replace(/^\{/, '{"displayName":"a\nb",'),
    (s) => s.replace(/^\{/, '{"displayName":"\\x41",'),
    (s) => s.replace(/^\{/, '{"displayName":"\\u12",'),
    (s) => s.replace(/^\{/, '{"displayName":"\\",'),
    (s) => s.replace(/^\{/, '{"a" "b",'),
    (s) => s.replace(/^\{/, '{"a":,'),
    (s) => s.replace(/,/, ',,'),
    (s) => s.replace(/:/, '::'),
    (s) => `${s}${s}`,
    (s) => `[${s}`,
    (s) => s.replace(/"/g, "'"),
    (s) => s.replace(/^\{/, '{\u00a0'),
  ]
  const garbage = [
    ',',
    '}',
    ']',
    'x',
    '{}',
    '[]',
    '"',
    '\u0000',
    'null',
    '//c',
    '/*',
    ';',
    '\\',
    '0',
    'true',
    ' ,',
    '\n}',
    '}}}}',
    '<xml/>',
  ]
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const text = JSON.stringify(baseBody(kind, id))
    const target = writeTo(rng, kind, id, world)
    let bad: string
    let cat: string
    const r = rng.int(3)
    if (r === 0) {
      cat = 'json-truncated'
      bad = text.slice(0, rng.int(text.length))
    } else if (r === 1) {
      cat = 'json-trailing-garbage'
      bad = text + rng.pick(garbage) + (rng.bool(0.3) ? rng.str(rng.int(20) + 1, 'abc{}[],:"0 \n') : '')
    } else {
      cat = 'json-nonstandard'
      bad = rng.pick(nonStandard)(text)
    }
    try {
      JSON.parse(bad)
      continue // still valid JSON (a harmless mutation): not part of this category
    } catch {
      // invalid, as intended
    }
    out.push({ cat, ...target, auth: 'manage', body: bad, status: 400 })
  }
  return out
}

function genNotAnObject(rng: Rng, world: World, n: number): Case[] {
  const tops = [
    '[]',
    '[{}]',
    '"a"',
    '1',
    '0',
    '-1',
    'true',
    'false',
    'null',
    '"{}"',
    '[null]',
    JSON.stringify([SAMPLE_BODIES.simple('X')]),
  ]
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const t = writeTo(rng, kind, targetId(rng, kind, world), world)
    const r = rng.int(tops.length + 3)
    if (r < tops.length)
      out.push({
        cat: 'json-not-an-object',
        ...t,
        auth: 'manage',
        body: `${rng.pick(['', ' ', '\n'])}${tops[r]}`,
        status: 400,
        errorPath: '',
      })
    else
      out.push({ cat: 'json-empty', ...t, auth: 'manage', body: rng.pick(['', ' ', '\n\n', '\t \r\n']), status: 400 })
  }
  return out
}

function genWrongTypes(rng: Rng, world: World, n: number): Case[] {
  // Every (kind, field, wrong value) once, then random ones until n.
  const all: Array<[Kind, string, unknown]> = []
  for (const kind of KINDS)
    for (const [field, type] of Object.entries(WRITABLE[kind]))
      for (const v of wrongValues(type)) all.push([kind, field, v])
  const picks = [...all]
  while (picks.length < n) picks.push(rng.pick(all))
  return picks.map(([kind, field, value]) => {
    const id = targetId(rng, kind, world)
    const body = baseBody(kind, id)
    body[field] = value
    const t = writeTo(rng, kind, id, world, field === 'id')
    return {
      cat: 'wrong-type',
      ...t,
      auth: 'manage',
      body: toJsonText(body),
      status: 400,
      errorPath: `/${field}`,
    } satisfies Case
  })
}

function genMissing(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const body = baseBody(kind, id)
    const req = REQUIRED[kind]
    const gone = rng.bool(0.2) ? req : [rng.pick(req)]
    for (const f of gone) delete body[f]
    // Without an id in the body a PUT takes the path's: a missing id is only missing on a POST.
    const t = writeTo(rng, kind, id, world, gone.includes('id'))
    out.push({
      cat: 'missing-required',
      ...t,
      auth: 'manage',
      body: JSON.stringify(body),
      status: 400,
      errorPath: `/${rng.pick(gone)}`,
    })
  }
  return out
}

function genUnknown(rng: Rng, world: World, n: number): Case[] {
  const fixed = [
    'foo',
    'Id',
    'ID',
    'Severity',
    'severity ',
    ' id',
    'detections',
    'pythonbody',
    'RuleID',
    'Detection',
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty',
    '',
    'a/b',
    'x~y',
    '\u0000',
    'ÿ',
    '😀',
    'id\u0000',
  ]
  const crossKind: Record<Kind, string[]> = {
    correlation: ['body', 'scheduledQueries', 'inlineFilters', 'alertTitle', 'groupBy', 'pythonBody'],
    // alertTitle, alertContext, dynamicSeverities and groupBy are a Python rule's fields too (PAT's
    // schema: kept, the module's functions decide); resourceTypes is a policy's.
    scheduled: ['detection', 'logTypes', 'inlineFilters', 'resourceTypes', 'pythonBody', 'correlationRuleReferenceIds'],
    simple: ['body', 'scheduledQueries', 'correlationRuleReferenceIds'],
  }
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const body = baseBody(kind, id)
    const keys: string[] = []
    for (let j = rng.int(3) + 1; j > 0; j--) {
      const k = rng.pick([rng.pick(fixed), rng.pick(crossKind[kind]), rng.str(rng.int(12) + 1)])
      if (Object.hasOwn(WRITABLE[kind], k) || READ_ONLY[kind].includes(k) || keys.includes(k)) continue
      setKey(body, k, rng.pick([1, 'x', null, true, [], {}, { severity: 'HIGH' }]))
      keys.push(k)
    }
    if (keys.length === 0) continue
    // A `__proto__` key is refused by the body reader, before the other unknown fields are looked at.
    const named = keys.includes('__proto__') ? '__proto__' : rng.pick(keys)
    out.push({
      cat: 'unknown-field',
      ...writeTo(rng, kind, id, world),
      auth: 'manage',
      body: JSON.stringify(body),
      status: 400,
      errorPath: ptr(named),
    })
  }
  return out
}

const INVALID_YAML: Array<[string, boolean]> = [
  // [text, the parser knows where]
  ['- KeyPath: a\n  Condition: [unclosed\n', true],
  ['- a: 1\n  a: 2\n', true],
  ['- a\n---\n- b\n', true],
  ['-\ta: 1\n\t b: 2', true],
  ['- "unterminated\n', true],
  ["- 'unterminated\n", true],
  ['- {a: 1\n', true],
  ['- a: b: c\n', true],
  ['- a\n b\n-c: [\n', true],
  ['- [a, b]]\n', true],
  ['- &a x\n- &a y\n- [*a\n', true],
  ['- "a" b\n', true],
  ['- !!binary ===\n- ]\n', true],
  ['- *nope\n', false],
  ['- ? [a\n', true],
]

function genYaml(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  const yamlKinds: Kind[] = ['correlation', 'simple']
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(yamlKinds)
    const field = rng.pick(YAML_FIELDS[kind])
    const id = targetId(rng, kind, world)
    const body = baseBody(kind, id)
    const r = rng.int(3)
    if (r === 0) {
      const [text, located] = rng.pick(INVALID_YAML)
      body[field] = text
      out.push({
        cat: 'yaml-invalid',
        ...writeTo(rng, kind, id, world),
        auth: 'manage',
        body: JSON.stringify(body),
        status: 400,
        errorPath: `/${field}`,
        located,
      })
    } else if (r === 1) {
      const d = 1000
      const shapes = [
        () => '['.repeat(d) + ']'.repeat(d),
        () => `${'{a: '.repeat(d)}1${'}'.repeat(d)}`,
        () => `${'- '.repeat(d)}x\n`,
        () => `${'- ['.repeat(d)}x${']'.repeat(d)}\n`,
        () => `${Array.from({ length: d }, (_, j) => `${' '.repeat(j)}a:`).join('\n')} 1\n`,
        () => `${Array.from({ length: d }, (_, j) => `${' '.repeat(j)}-`).join('\n')} x\n`,
      ]
      const text = rng.pick(shapes)()
      body[field] = rng.bool(0.2)
        ? `${field[0]!.toUpperCase()}${field.slice(1)}:\n  ${text.replace(/\n/g, '\n  ')}`
        : text
      out.push({
        cat: 'yaml-deep',
        ...writeTo(rng, kind, id, world),
        auth: 'manage',
        body: JSON.stringify(body),
        status: 400,
        errorPath: `/${field}`,
      })
    } else {
      out.push({
        cat: 'yaml-bomb',
        ...writeTo(rng, kind, id, world),
        auth: 'manage',
        body: JSON.stringify({ ...body, [field]: yamlBomb(rng) }),
        status: 400,
        errorPath: `/${field}`,
      })
    }
  }
  return out
}

/** Billion laughs: each level an anchored list of `width` aliases of the level below. */
function yamlBomb(rng: Rng): string {
  const levels = rng.int(5) + 5
  const width = rng.int(6) + 5
  const flow = rng.bool()
  const lines: string[] = []
  lines.push(
    flow
      ? `- a0: &a0 [${Array(width).fill('"lol"').join(', ')}]`
      : `- a0: &a0\n${Array(width).fill('    - lol').join('\n')}`,
  )
  for (let l = 1; l <= levels; l++) {
    lines.push(
      flow
        ? `  a${l}: &a${l} [${Array(width)
            .fill(`*a${l - 1}`)
            .join(', ')}]`
        : `  a${l}: &a${l}\n${Array(width)
            .fill(`    - *a${l - 1}`)
            .join('\n')}`,
    )
  }
  lines.push(`- KeyPath: *a${levels}\n  Condition: Equals\n  Value: *a${levels}`)
  return `${lines.join('\n')}\n`
}

function genDeepJson(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const d = rng.pick([101, 1000, 10_000, 10_000])
    const deep = rng.bool() ? '['.repeat(d) + ']'.repeat(d) : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`
    const body = baseBody(kind, id)
    const r = rng.int(5)
    if (r === 1) body.displayName = RAW(deep)
    else if (r === 2) body.reports = { a: RAW(deep) }
    else if (r === 3) body.tests = [{ name: 'a', expectedResult: true, log: RAW(deep) }]
    else if (r === 4) body.tags = RAW(deep)
    out.push({
      cat: 'json-deep',
      ...writeTo(rng, kind, id, world),
      auth: 'manage',
      body: r === 0 ? deep : toJsonText(body),
      status: 400,
    })
  }
  return out
}

/** A JSON write body of about `size` bytes: a `pad` string field of that length. */
function bigBody(kind: Kind, id: string, field: string, size: number): () => Buffer {
  return () => {
    const text = JSON.stringify({ ...SAMPLE_BODIES[kind](id), [field]: '' })
    const at = text.indexOf(`"${field}":""`) + field.length + 4
    return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.alloc(size, 0x78), Buffer.from(text.slice(at))])
  }
}

function genTooLarge(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const field = rng.pick(['displayName', 'id', 'description', kind === 'scheduled' ? 'body' : 'detection'])
    const size = rng.pick([MiB + 1, MiB + 1024, 2 * MiB, 5 * MiB, 10 * MiB, 10 * MiB])
    out.push({
      cat: 'too-large',
      ...writeTo(rng, kind, id, world),
      auth: 'manage',
      body: bigBody(kind, id, field, size),
      chunked: rng.bool(0.4),
      status: 413,
    })
  }
  return out
}

const BAD_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0x80],
  [0xbf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe0, 0x80, 0xaf],
  [0xf0, 0x9f, 0x98],
  [0xc3],
]

function genUtf8(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const text = JSON.stringify(baseBody(kind, id))
    const bad = Buffer.from(rng.pick(BAD_UTF8))
    // Inside a string value, inside a key, or at the very end.
    const quotes = [...text.matchAll(/"/g)].map((m) => m.index!)
    const where = rng.int(4)
    const at = where === 3 ? text.length : quotes[rng.int(quotes.length)]! + 1
    const body = Buffer.concat([Buffer.from(text.slice(0, at)), bad, Buffer.from(text.slice(at))])
    out.push({ cat: 'invalid-utf8', ...writeTo(rng, kind, id, world), auth: 'manage', body, status: 400 })
  }
  // UTF-16 is not UTF-8 JSON either (its NUL bytes are valid UTF-8, the JSON is not).
  for (let i = 0; i < Math.ceil(n / 20); i++) {
    const kind = rng.pick(KINDS)
    out.push({
      cat: 'invalid-utf8',
      method: 'POST',
      path: KIND_PATH[kind],
      auth: 'manage',
      body: Buffer.concat([
        Buffer.from(rng.bool() ? [0xff, 0xfe] : []),
        Buffer.from(JSON.stringify(baseBody(kind, newId(rng))), 'utf16le'),
      ]),
      status: 400,
    })
  }
  return out
}

function genContentType(rng: Rng, world: World, n: number): Case[] {
  const types = [
    'text/plain',
    'application/xml',
    'text/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    'application/json-seq',
    'application/javascript',
    'json',
    'application',
    '*/*',
    'application/octet-stream',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json;charset="iso-8859-1"',
    'text/yaml',
    'application/yaml',
  ]
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const body = rng.bool(0.7) ? JSON.stringify(baseBody(kind, id)) : 'not json {'
    const t = writeTo(rng, kind, id, world)
    if (rng.bool(0.15)) out.push({ cat: 'content-type', ...t, auth: 'manage', body, noContentType: true, status: 415 })
    else
      out.push({
        cat: 'content-type',
        ...t,
        auth: 'manage',
        body,
        headers: { 'Content-Type': rng.pick(types) },
        status: 415,
      })
  }
  return out
}

function genContentEncoding(rng: Rng, world: World, n: number, bomb: Buffer): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const id = targetId(rng, kind, world)
    const plain = Buffer.from(JSON.stringify(baseBody(kind, id)))
    const r = rng.int(4)
    const [enc, body] =
      r === 0
        ? ['gzip', zlib.gzipSync(plain)]
        : r === 1
          ? [rng.pick(['gzip', 'x-gzip', 'GZIP']), bomb]
          : r === 2
            ? ['deflate', zlib.deflateSync(plain)]
            : [rng.pick(['br', 'compress', 'gzip, identity', 'identity, gzip', 'zstd']), plain]
    out.push({
      cat: 'content-encoding',
      ...writeTo(rng, kind, id, world),
      auth: 'manage',
      body,
      headers: { 'Content-Encoding': enc },
      status: 415,
    })
  }
  return out
}

const encodeQ = (k: string, v: string) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`

function genQuery(rng: Rng, world: World, n: number): Case[] {
  const badBool = [
    'yes',
    'no',
    '1',
    '0',
    'TRUE',
    'False',
    '',
    'on',
    'off',
    'true ',
    ' true',
    'true,false',
    'tru',
    'null',
  ]
  const badLimit = [
    '0',
    '-1',
    '1001',
    '100000',
    '9999999',
    '99999999',
    'abc',
    '1.5',
    '1e2',
    '',
    ' 1',
    '0x10',
    '+5',
    '10abc',
    'NaN',
    'Infinity',
    '١٠',
  ]
  const b64 = (s: string) => Buffer.from(s).toString('base64url')
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const kp = KIND_PATH[kind]
    const otherKind = rng.pick(KINDS.filter((k) => k !== kind))
    const r = rng.int(10)
    if (r <= 3) {
      // List.
      const badCursors = [
        rng.str(rng.int(40) + 1),
        '!!!',
        'a'.repeat(2001),
        b64('not json'),
        b64('null'),
        b64('[]'),
        b64(JSON.stringify({ k: otherKind, a: 'x' })),
        b64(JSON.stringify({ k: kind, a: 1 })),
        b64(JSON.stringify({ k: kind })),
        b64(JSON.stringify({ a: 'x' })),
        `${b64(JSON.stringify({ k: kind, a: 'x' }))}=`,
        '%ff',
        '../../etc',
      ]
      const unknown = [
        'Limit',
        'LIMIT',
        'limit ',
        'page',
        'offset',
        'sort',
        'q',
        'include_python',
        'name_contains',
        rng.str(6),
        ...(kind !== 'simple' ? ['include-python', 'log-type'] : []),
        ...(kind !== 'scheduled' ? ['scheduled-query'] : []),
      ]
      const q = [
        () => encodeQ('limit', rng.pick(badLimit)),
        () => `limit=10&limit=20`,
        () => encodeQ('cursor', rng.pick(badCursors)),
        () => `cursor=${b64(JSON.stringify({ k: kind, a: 'x' }))}&cursor=x`,
        () => encodeQ('state', rng.pick(['on', 'ENABLED', 'true', '', 'enabled,disabled', 'Disabled'])),
        () => encodeQ('severity', rng.pick(['urgent', 'HIGH,nope', '', ',', ' , ', 'HIGHER'])),
        () => encodeQ('tag', rng.pick(['', ',', ' ,, '])),
        () => `name-contains=a&name-contains=b`,
        () => `created-by=a&created-by=b`,
        () => `state=enabled&state=disabled`,
        () => encodeQ(rng.pick(unknown), 'x'),
        () => `limit=10&${encodeQ(rng.pick(unknown), '1')}`,
        ...(kind === 'simple'
          ? [() => encodeQ('include-python', rng.pick(badBool)), () => encodeQ('log-type', rng.pick(['', ',']))]
          : []),
        ...(kind === 'scheduled' ? [() => encodeQ('scheduled-query', rng.pick(['', ',']))] : []),
      ]
      out.push({
        cat: 'query-list',
        method: 'GET',
        path: `${kp}?${rng.pick(q)()}`,
        auth: rng.pick(['manage', 'view'] as const),
        status: 400,
      })
    } else if (r === 4) {
      // One rule.
      const q =
        kind === 'simple' && rng.bool()
          ? encodeQ('include-python', rng.pick(badBool))
          : encodeQ(
              rng.pick(['include_python', 'limit', 'x', 'cursor', ...(kind !== 'simple' ? ['include-python'] : [])]),
              'true',
            )
      out.push({
        cat: 'query-get',
        method: 'GET',
        path: `${kp}/${encodeURIComponent(rng.bool() ? world.existing[kind] : newId(rng))}?${q}`,
        auth: 'view',
        status: 400,
      })
    } else if (r <= 7) {
      // A valid body with a bad query: refused before anything is tested or saved.
      const id = targetId(rng, kind, world)
      const q = rng.pick([
        () => encodeQ('run-tests-first', rng.pick(badBool)),
        () => encodeQ('run-tests-only', rng.pick(badBool)),
        () => 'run-tests-first=true&run-tests-first=false',
        () => 'run-tests-only=false&run-tests-only=false',
        () =>
          encodeQ(
            rng.pick([
              'dry-run',
              'force',
              'run_tests_first',
              'runTestsFirst',
              'run-tests',
              'include-python',
              'allow-mass-delete',
              rng.str(5),
            ]),
            'true',
          ),
      ])()
      const put = rng.bool()
      out.push({
        cat: 'query-write',
        method: put ? 'PUT' : 'POST',
        path: put ? `${kp}/${encodeURIComponent(id)}?${q}` : `${kp}?${q}`,
        auth: 'manage',
        body: JSON.stringify(baseBody(kind, id)),
        status: 400,
      })
    } else if (r === 8) {
      // Delete of an existing rule with an unknown parameter: refused, nothing deleted.
      out.push({
        cat: 'query-delete',
        method: 'DELETE',
        path: `${kp}/${encodeURIComponent(world.existing[kind])}?${encodeQ(rng.pick(['force', 'cascade', 'run-tests-first', rng.str(4)]), 'true')}`,
        auth: 'manage',
        status: 400,
      })
    } else {
      out.push({
        cat: 'query-reconcile',
        method: 'POST',
        path: `/reconcile?${rng.bool() ? encodeQ('allow-mass-delete', rng.pick(badBool)) : encodeQ(rng.pick(['force', 'dry-run', rng.str(5)]), 'true')}`,
        auth: 'manage',
        status: 400,
      })
    }
  }
  return out
}

const BAD_IDS = [
  '',
  ' ',
  ' lead',
  'trail ',
  '  both  ',
  '\u0000',
  'a\u0000b',
  'a\u0001b',
  'a\u001fb',
  'a\u007fb',
  'a\nb',
  'a\rb',
  'a\tb',
  '\u001b[31mred',
  'a<b',
  'a>b',
  'a&b',
  'a"b',
  'a%b',
  '%2e%2e%2f',
  '%2e%2e%2fetc%2fpasswd',
  '..%2f..%2fetc',
  '%00',
  '%',
  '<script>alert(1)</script>',
  '&amp;',
  '"quoted"',
  '../%2e%2e/x',
  'x'.repeat(256),
  'x'.repeat(1000),
  'é'.repeat(256),
  '😀'.repeat(256),
  `${'a'.repeat(254)} `,
]
/** Ids that are legal (the spec allows `/` and dots; the file name is sanitized) but look like traversal. */
const TRAVERSAL_IDS = [
  '../x',
  '../../etc/passwd',
  '..',
  '.',
  '/',
  'a/../../b',
  '.git/config',
  '..\\..\\x',
  '/etc/passwd',
  'refs/heads/main',
  '../../../../../../tmp/x',
]

function genBadIds(rng: Rng, _world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const kp = KIND_PATH[kind]
    const r = rng.int(7)
    if (r <= 1) {
      // In the body of a POST.
      const body = baseBody(kind, rng.pick(BAD_IDS))
      out.push({
        cat: 'bad-id-body',
        method: 'POST',
        path: `${kp}${rng.pick(VALID_WRITE_QUERIES)}`,
        auth: 'manage',
        body: JSON.stringify(body),
        status: 400,
        errorPath: '/id',
      })
    } else if (r === 2) {
      // In the path of a PUT (with the body's id the same string).
      const id = rng.pick(BAD_IDS.filter((x) => x !== ''))
      out.push({
        cat: 'bad-id-path',
        method: 'PUT',
        path: `${kp}/${encodeURIComponent(id)}`,
        auth: 'manage',
        body: JSON.stringify(baseBody(kind, id)),
        status: 400,
        errorPath: '/id',
      })
    } else if (r === 3) {
      // Traversal-looking but legal ids in a body with another defect: the defect is reported.
      const id = rng.pick(TRAVERSAL_IDS)
      const body = baseBody(kind, id)
      delete body.severity
      const put = rng.bool()
      out.push({
        cat: 'traversal-id-write',
        method: put ? 'PUT' : 'POST',
        path: put ? `${kp}/${encodeURIComponent(id)}` : kp,
        auth: 'manage',
        body: JSON.stringify(body),
        status: 400,
        errorPath: '/severity',
      })
    } else if (r === 4) {
      // Reads and deletes of traversal ids: nothing of that id exists.
      const id = rng.pick([...TRAVERSAL_IDS, ...BAD_IDS.filter((x) => x !== '')])
      const enc = rng.pick([encodeURIComponent(id), encodeURIComponent(encodeURIComponent(id))])
      out.push({
        cat: 'traversal-id-read',
        method: rng.pick(['GET', 'DELETE']),
        path: `${kp}/${enc}`,
        auth: 'manage',
        status: 404,
      })
    } else if (r === 5) {
      // Raw `..` segments and malformed escapes in the path.
      const raw = rng.pick([
        `${kp}/../../etc/passwd`,
        `${kp}/../healthz`,
        `${kp}/x/../../status`,
        `${kp}/%2e%2e/%2e%2e/etc`,
        `${kp}/a/b`,
        `${kp}/..%2F..%2Fetc%2Fpasswd/x`,
      ])
      out.push({ cat: 'traversal-path', method: rng.pick(['GET', 'DELETE']), path: raw, auth: 'manage', status: 404 })
    } else {
      const esc = rng.pick(['%zz', '%', '%e0%a4%a', '%ff', '%c0%ae%c0%ae', '%u002e', '%00', '%0a', '%7f'])
      const put = rng.bool()
      const body = baseBody(kind, `x${esc}`)
      out.push(
        put
          ? {
              cat: 'bad-escape-path',
              method: 'PUT',
              path: `${kp}/x${esc}`,
              auth: 'manage',
              body: JSON.stringify(body),
              status: 400,
              errorPath: '/id',
            }
          : {
              cat: 'bad-escape-path',
              method: rng.pick(['GET', 'DELETE']),
              path: `${kp}/x${esc}`,
              auth: 'manage',
              status: 404,
            },
      )
    }
  }
  return out
}

function genIdMismatch(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const pathId = rng.bool(1 / 3) ? world.existing[kind] : newId(rng)
    const other = rng.pick([
      newId(rng),
      pathId.toLowerCase() === pathId ? `${pathId}x` : pathId.toLowerCase(),
      `${pathId}.`,
      `${` ${pathId}`.trim()}2`,
      world.existing[rng.pick(KINDS)],
    ])
    const bodyId = other === pathId ? `${pathId}-2` : other
    out.push({
      cat: 'id-mismatch',
      method: 'PUT',
      path: `${KIND_PATH[kind]}/${encodeURIComponent(pathId)}${rng.pick(VALID_WRITE_QUERIES)}`,
      auth: 'manage',
      body: JSON.stringify(baseBody(kind, bodyId)),
      status: 400,
      errorPath: '/id',
    })
  }
  return out
}

/** Every API route with a body or not: [method, path, needs Manage Rules]. */
function apiRoutes(rng: Rng, world: World): Array<[string, string, boolean]> {
  const kind = rng.pick(KINDS)
  const kp = KIND_PATH[kind]
  const id = encodeURIComponent(rng.bool() ? world.existing[kind] : newId(rng))
  return [
    ['GET', kp, false],
    ['GET', `${kp}/${id}`, false],
    ['POST', kp, true],
    ['PUT', `${kp}/${id}`, true],
    ['DELETE', `${kp}/${id}`, true],
    ['GET', '/status', false],
    ['POST', '/reconcile', true],
  ]
}

function anyBody(rng: Rng, kind: Kind, id: string): Pick<Case, 'body' | 'headers' | 'chunked'> {
  const r = rng.int(6)
  if (r === 0) return { body: JSON.stringify(baseBody(kind, id)) }
  if (r === 1) return { body: '{"id": ' }
  if (r === 2) return { body: bigBody(kind, id, 'displayName', 2 * MiB), chunked: rng.bool() }
  if (r === 3) return { body: JSON.stringify(baseBody(kind, id)), headers: { 'Content-Type': 'text/plain' } }
  if (r === 4)
    return { body: zlib.gzipSync(JSON.stringify(baseBody(kind, id))), headers: { 'Content-Encoding': 'gzip' } }
  return { body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }
}

function genAuth(rng: Rng, world: World, n401: number, n403: number): Case[] {
  const out: Case[] = []
  const wrongKeys = (): Auth => {
    const b = world.bootstrap
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
    return rng.pick<Auth>([
      'none',
      { key: '' },
      { key: rng.str(rng.int(60) + 1) },
      { key: `rk_${rng.str(12)}_${rng.str(43, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-')}` },
      { key: flip(b, rng.int(b.length)) },
      { key: b.slice(0, -1) },
      { key: `${b}x` },
      { key: ` ${b}x` },
      { key: b.toUpperCase() === b ? b.toLowerCase() : b.toUpperCase() },
      { key: `Bearer ${b}` },
      { key: world.revoked },
      { key: world.expired },
      { key: 'x'.repeat(600) },
      { key: 'rk_' },
      { key: AUDIT_TOKEN },
    ])
  }
  for (let i = 0; i < n401; i++) {
    const kind = rng.pick(KINDS)
    const [method, p, write] = rng.pick(apiRoutes(rng, world))
    const id = newId(rng)
    const body = write && p !== '/reconcile' ? anyBody(rng, kind, id) : {}
    out.push({ cat: 'auth-401', method, path: p, auth: wrongKeys(), ...body, status: 401 })
  }
  for (let i = 0; i < n403; i++) {
    const kind = rng.pick(KINDS)
    const routes = apiRoutes(rng, world)
    if (rng.bool(0.75)) {
      // View Rules only, on a write.
      const [method, p] = rng.pick(routes.filter((r) => r[2]))
      out.push({
        cat: 'auth-403-view-on-write',
        method,
        path: p,
        auth: 'view',
        ...(p !== '/reconcile' && method !== 'DELETE' ? anyBody(rng, kind, newId(rng)) : {}),
        status: 403,
      })
    } else {
      // Manage Rules only, on a read.
      const [method, p] = rng.pick(routes.filter((r) => !r[2]))
      out.push({ cat: 'auth-403-manage-on-read', method, path: p, auth: 'manageOnly', status: 403 })
    }
  }
  return out
}

function genMethods(rng: Rng, world: World, n: number): Case[] {
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const kind = rng.pick(KINDS)
    const kp = KIND_PATH[kind]
    const [method, p] = rng.pick<[string, string]>([
      ['PATCH', kp],
      ['PATCH', `${kp}/${encodeURIComponent(world.existing[kind])}`],
      ['PATCH', `${kp}/${newId(rng)}`],
      ['PUT', kp],
      ['DELETE', kp],
      ['POST', `${kp}/${newId(rng)}`],
      ['POST', '/healthz'],
      ['DELETE', '/metrics'],
      ['POST', '/openapi.json'],
      ['PUT', '/status'],
      ['GET', '/reconcile'],
      ['GET', '/hooks/git'],
    ])
    out.push({
      cat: 'wrong-method',
      method,
      path: rng.bool(0.2) ? `${p}?${rng.str(4)}=1` : p,
      auth: rng.pick(['manage', 'none'] as const),
      ...(method !== 'GET' && method !== 'DELETE' ? { body: '{}' } : {}),
      status: 405,
    })
  }
  return out
}

function genLogSource(rng: Rng, world: World, n: number, bomb: Buffer): Case[] {
  const out: Case[] = []
  const line = Buffer.from('{"id":"e1","timestamp":"2026-11-21T12:00:00.000Z"}\n')
  for (let i = 0; i < n; i++) {
    const r = rng.int(6)
    const auth = rng.pick([
      undefined,
      'Bearer wrong',
      'Bearer',
      `Basic ${Buffer.from(`x:${AUDIT_TOKEN}`).toString('base64')}`,
      `Bearer ${AUDIT_TOKEN}x`,
      `bearer  ${AUDIT_TOKEN.slice(1)}`,
      `Bearer ${world.bootstrap}`,
    ])
    const headers: Record<string, string> = { 'Content-Type': 'application/x-ndjson' }
    if (auth) headers.Authorization = auth
    if (r <= 3) {
      const gz = rng.bool()
      if (gz) headers['Content-Encoding'] = 'gzip'
      out.push({
        cat: 'log-source-401',
        method: 'POST',
        path: '/http/editor-audit',
        auth: rng.pick(['none', 'manage'] as const),
        headers,
        body: gz ? bomb : line,
        status: 401,
      })
    } else if (r === 4) {
      out.push({
        cat: 'log-source-404',
        method: 'POST',
        path: `/http/${rng.pick(['nope', 'editor-audit-x', '..%2f..%2fetc', 'EDITOR-AUDIT', '%00'])}`,
        auth: 'none',
        headers: { ...headers, Authorization: `Bearer ${AUDIT_TOKEN}` },
        body: line,
        status: 404,
      })
    } else {
      out.push({
        cat: 'webhook-404',
        method: 'POST',
        path: '/hooks/git',
        auth: 'none',
        headers: {
          'Content-Type': 'application/json',
          'X-Hub-Signature-256': `sha256=${rng.str(64, '0123456789abcdef')}`,
        },
        body: '{"ref":"refs/heads/main"}',
        status: 404,
      })
    }
  }
  return out
}

/**
 * Heap and external memory that survive a full garbage collection (gc exposed at run time), once
 * transient work has ended: the YAML checking thread stops after 2 s idle, sockets finish closing.
 */
async function retainedBytes(): Promise<number> {
  // wait: the YAML thread's 2 s idle stop and closing sockets; no event to wait on
  await new Promise((r) => setTimeout(r, 2500))
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  gc()
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}

// ---------------------------------------------------------------------------------------------
// State that must not change.

interface RepoState {
  head: string
  count: string
  refs: string
  rules: Record<Kind, string>
  logs: string
}

function listTree(dir: string): string {
  const out: string[] = []
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(`${path.relative(dir, p)} ${fs.statSync(p).size}`)
    }
  }
  walk(dir)
  return out.join('\n')
}

async function repoState(s: TestServer): Promise<RepoState> {
  const rules = {} as Record<Kind, string>
  for (const k of KINDS) {
    const r = await s.request('GET', `${KIND_PATH[k]}?limit=1000`)
    rules[k] = JSON.stringify(
      (r.body?.results ?? []).map((x: { id: string; lastModified: string }) => [x.id, x.lastModified]),
    )
  }
  return {
    head: s.git('rev-parse', 'refs/heads/main').trim(),
    count: s.git('rev-list', '--count', 'refs/heads/main').trim(),
    refs: s.git('for-each-ref', '--format=%(refname) %(objectname)'),
    rules,
    logs: listTree(path.join(s.dataDir, 'logs')),
  }
}

function fsck(gitdir: string): { status: number | null; output: string } {
  const r = spawnSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-progress', '--no-dangling'], {
    encoding: 'utf8',
  })
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() }
}

// ---------------------------------------------------------------------------------------------

const SEED = process.env.RK_CORPUS_SEED
  ? Number(process.env.RK_CORPUS_SEED) >>> 0
  : (Date.now() ^ (process.pid << 16)) >>> 0

t.test(
  'a corpus of 10,000+ malformed requests: each a 4xx with a message; server, repository and memory unharmed',
  async (t) => {
    t.comment(`corpus seed ${SEED} (replay with RK_CORPUS_SEED=${SEED})`)
    const s = await startTestServer({
      env: { RK_CORPUS_AUDIT_TOKEN: AUDIT_TOKEN },
      // The yaml-deep texts reach ~500 KB: the corpus checks the parser's bounds on them (400); the
      // per-rule size limit (413 past rules.maxFileBytes) is checked in test/security/parser-bounds.
      config: {
        rules: { maxFileBytes: MiB },
        logSources: [
          {
            id: 'editor-audit',
            logType: 'Editor.Audit',
            auth: { method: 'Bearer', tokenEnv: 'RK_CORPUS_AUDIT_TOKEN' },
          },
        ],
      },
    })
    t.teardown(() => s.close())
    const store = new TokenStore(s.dataDir)
    const tokens: Tokens = {
      manage: s.token,
      view: await s.makeToken('corpus-view', ['View Rules']),
      manageOnly: await s.makeToken('corpus-manage-only', ['Manage Rules']),
    }
    const revoked = store.create({ name: 'corpus-revoked', permissions: ['View Rules', 'Manage Rules'] })
    store.revoke(revoked.token.id)
    const expired = store.create({
      name: 'corpus-expired',
      permissions: ['View Rules', 'Manage Rules'],
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    })

    // The template's rules serve as the existing ids; each kind must have one.
    const existing = {} as Record<Kind, string>
    for (const k of KINDS) {
      const r = await s.request('GET', KIND_PATH[k])
      t.equal(r.status, 200)
      existing[k] = r.body.results[0]?.id
      t.ok(existing[k], `the template repository has a ${k} rule`)
    }
    // The base bodies are valid: every corpus case is one of them with a defect.
    for (const k of KINDS) {
      const r = await s.request('POST', `${KIND_PATH[k]}?run-tests-only=true`, SAMPLE_BODIES[k]('Corpus.Preflight'))
      t.equal(r.status, 204, `the ${k} base body is valid (${r.text.slice(0, 300)})`)
    }
    // The revoked token is refused once the server has re-read the store (within 1 s by the spec).
    for (
      let i = 0;
      i < 40 && (await s.request('GET', '/simple-rules', undefined, { 'X-API-Key': revoked.secret })).status !== 401;
      i++
    )
      await new Promise((r) => setTimeout(r, 100)) // wait: poll interval of a wait on a condition

    const world: World = { existing, revoked: revoked.secret, expired: expired.secret, bootstrap: s.token }
    const rng = new Rng(SEED)
    const bomb = zlib.gzipSync(Buffer.alloc(10 * MiB), { level: 9 })
    const cases = rng.shuffle([
      ...genJsonSyntax(rng, world, 1200),
      ...genNotAnObject(rng, world, 200),
      ...genWrongTypes(rng, world, 1800),
      ...genMissing(rng, world, 400),
      ...genUnknown(rng, world, 600),
      ...genYaml(rng, world, 700),
      ...genDeepJson(rng, world, 200),
      ...genTooLarge(rng, world, 60),
      ...genUtf8(rng, world, 500),
      ...genContentType(rng, world, 300),
      ...genContentEncoding(rng, world, 200, bomb),
      ...genQuery(rng, world, 1300),
      ...genBadIds(rng, world, 900),
      ...genIdMismatch(rng, world, 300),
      ...genAuth(rng, world, 1200, 700),
      ...genMethods(rng, world, 100),
      ...genLogSource(rng, world, 200, bomb),
    ])
    t.ok(cases.length >= 10_000, `the corpus has ${cases.length} requests`)

    const before = await repoState(s)
    const fsckBefore = fsck(s.gitdir)
    t.equal(fsckBefore.status, 0, `git fsck --strict is clean before: ${fsckBefore.output}`)

    const base = new URL(s.url)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    t.teardown(() => agent.destroy())
    const secrets = [
      tokens.manage,
      tokens.view,
      tokens.manageOnly,
      revoked.secret,
      expired.secret,
      AUDIT_TOKEN,
      s.dataDir,
    ]
    const failures = new Map<string, Array<{ c: Case; why: string; got: string }>>()
    const counts = new Map<string, number>()
    const statuses = new Map<number, number>()
    let fiveHundreds = 0
    const record = (c: Case, r: Sent) => {
      counts.set(c.cat, (counts.get(c.cat) ?? 0) + 1)
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
      if (r.status >= 500) fiveHundreds++
      const why = judge(c, r, secrets)
      if (why) {
        const list = failures.get(c.cat) ?? []
        list.push({ c, why, got: r.text.slice(0, 300) })
        failures.set(c.cat, list)
      }
    }

    const started = Date.now()
    const rssBefore = process.memoryUsage().rss
    let rssMax = rssBefore
    let heapBefore = 0
    const BATCH = 500
    const CONCURRENCY = 16
    const stats = { retries: 0, freshResets: [] as string[] }
    let healthy = 0
    for (let from = 0; from < cases.length; from += BATCH) {
      const batch = cases.slice(from, from + BATCH)
      let next = 0
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < batch.length) {
            const c = batch[next++]!
            record(c, await sendCase(base, agent, tokens, c, stats))
          }
        }),
      )
      rssMax = Math.max(rssMax, process.memoryUsage().rss)
      // The first batch warms up (JIT, pools, metric series); the retained-memory baseline is taken after it.
      if (from === 0) heapBefore = await retainedBytes()
      const h = await sendCase(base, agent, tokens, {
        cat: 'healthz',
        method: 'GET',
        path: '/healthz',
        auth: 'none',
        status: 200,
      })
      if (h.status === 200) healthy++
      else t.fail(`healthz after ${from + batch.length} requests answered ${h.status} ${h.error ?? ''}`)
    }
    const seconds = (Date.now() - started) / 1000
    const rssAfter = process.memoryUsage().rss
    const heapAfter = await retainedBytes()
    t.comment(
      `${cases.length} requests in ${seconds.toFixed(1)} s (${stats.retries} resent after a dropped connection, ${stats.freshResets.length} of them on a new socket); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    )
    t.comment(
      `RSS before ${(rssBefore / MiB).toFixed(0)} MiB, max ${(rssMax / MiB).toFixed(0)} MiB, after ${(rssAfter / MiB).toFixed(0)} MiB; retained after GC ${(heapBefore / MiB).toFixed(0)} -> ${(heapAfter / MiB).toFixed(0)} MiB`,
    )
    if (stats.freshResets.length > 0)
      t.comment(`reset on a new connection (resent): ${stats.freshResets.slice(0, 5).join(' | ')}`)
    // A server that dropped connections after answering would make most reuses fail, not a few.
    t.ok(stats.retries <= cases.length / 10, `few requests met a dropped connection (${stats.retries})`)

    t.equal(fiveHundreds, 0, 'no request answered 5xx')
    t.equal(healthy, Math.ceil(cases.length / BATCH), '/healthz answered 200 after every batch')
    for (const [cat, n] of [...counts].sort()) {
      const f = failures.get(cat) ?? []
      const examples = f
        .slice(0, 3)
        .map(
          (x) =>
            `${x.why}: ${x.c.method} ${x.c.path.slice(0, 120)} ${typeof x.c.body === 'string' ? JSON.stringify(x.c.body.slice(0, 160)) : ''} -> ${x.got}`,
        )
      t.equal(f.length, 0, `${cat}: ${n - f.length} of ${n} answered as expected`, { examples })
    }

    // Nothing changed: the branch, its history, every ref, the served rules, the log store.
    const after = await repoState(s)
    t.equal(after.head, before.head, 'the branch head is unchanged')
    t.equal(after.count, before.count, 'git rev-list --count is unchanged')
    t.equal(after.refs, before.refs, 'no ref was created, moved or deleted')
    t.same(after.rules, before.rules, 'the served rules of every kind are unchanged')
    t.equal(after.logs, before.logs, 'the log store is unchanged')
    const fsckAfter = fsck(s.gitdir)
    t.equal(fsckAfter.status, 0, `git fsck --strict is clean after: ${fsckAfter.output}`)
    t.equal(fsckAfter.output, '', 'git fsck reports nothing')

    // Memory: RSS is generous (the client side and its 10 MB bodies share the process); what survives
    // a full GC is tight: a server keeping a few KB per refused request would pass 64 MiB.
    t.ok(
      rssMax - rssBefore < 768 * MiB,
      `RSS grew by ${((rssMax - rssBefore) / MiB).toFixed(0)} MiB at most (bound 768 MiB)`,
    )
    t.ok(
      heapAfter - heapBefore < 64 * MiB,
      `memory retained after GC grew by ${((heapAfter - heapBefore) / MiB).toFixed(1)} MiB (bound 64 MiB)`,
    )
    // Metric series are labelled by route pattern: 10,000 odd paths must not make 10,000 series.
    const metrics = await sendCase(base, agent, tokens, {
      cat: 'metrics',
      method: 'GET',
      path: '/metrics',
      auth: 'none',
      status: 200,
    })
    const routeLabels = new Set(
      [...metrics.text.matchAll(/^rulekeeper_http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]!),
    )
    const patterns = new Set([
      'unmatched',
      '/healthz',
      '/metrics',
      '/hooks/git',
      '/http/:sourceId',
      '/openapi.json',
      '/status',
      '/reconcile',
      ...KINDS.flatMap((k) => [KIND_PATH[k], `${KIND_PATH[k]}/:id`]),
    ])
    t.ok(routeLabels.size > 0, 'the request counter is exported')
    t.same(
      [...routeLabels].filter((r) => !patterns.has(r)).slice(0, 10),
      [],
      'every route label of the request metrics is a route pattern or "unmatched", never a raw path',
    )

    // And the server still does real work.
    const ok = await s.request('POST', '/simple-rules?run-tests-only=true', SAMPLE_BODIES.simple('Corpus.After'))
    t.equal(ok.status, 204, 'a valid request still succeeds after the corpus')
  },
)

t.test('10 MB strings that fit a raised body limit are refused by validation, not by the size check', async (t) => {
  const s = await startTestServer({ config: { api: { maxBodyBytes: 32 * MiB }, rules: { maxFileBytes: 32 * MiB } } })
  t.teardown(() => s.close())
  const before = await repoState(s)
  const rssBefore = process.memoryUsage().rss
  let rssMax = rssBefore
  const ten = 10 * MiB
  const big = 'x'.repeat(ten)
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['id of 10 MB', '/simple-rules', SAMPLE_BODIES.simple(big), '/id'],
    ['severity of 10 MB', '/simple-rules', SAMPLE_BODIES.simple('Big.A', { severity: big }), '/severity'],
    [
      'detection of 10 MB (a scalar, not a list)',
      '/simple-rules',
      SAMPLE_BODIES.simple('Big.B', { detection: big }),
      '/detection',
    ],
    [
      'correlation detection of 10 MB',
      '/correlation-rules',
      SAMPLE_BODIES.correlation('Big.C', { detection: big }),
      '/detection',
    ],
    [
      'a 10 MB Python body in a rule without severity',
      '/scheduled-rules',
      {
        ...SAMPLE_BODIES.scheduled('Big.D', { body: `# ${big}\ndef rule(e):\n    return True\n` }),
        severity: undefined,
      },
      '/severity',
    ],
    [
      'a 10 MB tag in a body with an unknown field',
      '/simple-rules',
      SAMPLE_BODIES.simple('Big.E', { tags: [big], nope: 1 }),
      '/nope',
    ],
    ['a 10 MB unknown field name', '/simple-rules', SAMPLE_BODIES.simple('Big.F', { [big]: 1 }), `/${big}`],
    [
      'a 10 MB display name with a bad threshold',
      '/scheduled-rules',
      SAMPLE_BODIES.scheduled('Big.G', { displayName: big, threshold: 0 }),
      '/threshold',
    ],
    [
      'a 10 MB inline filter that is not YAML',
      '/simple-rules',
      SAMPLE_BODIES.simple('Big.H', { inlineFilters: `[${big}` }),
      '/inlineFilters',
    ],
  ]
  for (const [name, p, body, errorPath] of cases) {
    const started = Date.now()
    const r = await s.request('POST', p, body)
    rssMax = Math.max(rssMax, process.memoryUsage().rss)
    t.equal(r.status, 400, `${name}: 400 (${r.text.slice(0, 200)})`)
    t.ok(typeof r.body?.message === 'string' && r.body.message !== '', `${name}: a message`)
    t.ok(
      Array.isArray(r.body?.errors) && r.body.errors.some((e: { path: string }) => e.path === errorPath),
      `${name}: errors name the field`,
    )
    t.ok(
      r.text.length < 64 * 1024 || errorPath.length > 1024,
      `${name}: the answer does not echo the 10 MB value (${r.text.length} bytes)`,
    )
    t.ok(Date.now() - started < 20_000, `${name}: answered in ${Date.now() - started} ms`)
    t.equal((await s.request('GET', '/healthz')).status, 200, `${name}: still serving`)
  }
  t.comment(`RSS before ${(rssBefore / MiB).toFixed(0)} MiB, max ${(rssMax / MiB).toFixed(0)} MiB`)
  t.ok(
    rssMax - rssBefore < 768 * MiB,
    `RSS grew by ${((rssMax - rssBefore) / MiB).toFixed(0)} MiB at most (bound 768 MiB)`,
  )
  const after = await repoState(s)
  t.same({ ...after, logs: '' }, { ...before, logs: '' }, 'the repository is unchanged')
  t.equal(fsck(s.gitdir).status, 0, 'git fsck --strict is clean')
})
