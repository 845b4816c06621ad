// The console's only way to the server: the public REST API with the user's token in X-API-Key.
// The token lives in sessionStorage (this tab only; never a cookie, a URL or the page's markup).
// The token's permissions come from `GET /whoami`, so buttons can be disabled with a reason; the
// rule kinds and log types from `GET /kinds` and `GET /log-types`, loaded once a session (app.js).

const BASE = document.querySelector('meta[name="rulekeeper-base-path"]')?.getAttribute('content') ?? ''
const KEY = 'rulekeeper.token'

export const session = {
  token: () => sessionStorage.getItem(KEY),
  signIn: (t) => sessionStorage.setItem(KEY, t),
  signOut: () => {
    sessionStorage.removeItem(KEY)
    perms = null
    loaded = null
  },
}

/** Raised (after the token is forgotten) when the server answers 401: the sign-in page is shown. */
export class SignedOut extends Error {}

/**
 * `api(method, path, { query, body, headers })` → `{ status, ok, headers, body }` (body parsed from
 * JSON when it is JSON). `path` is below the API's base path; `query` values may be arrays; `signal`
 * aborts the request (the connection closes: a replay on the server stops).
 */
export async function api(method, path, opts = {}) {
  const url = new URL(`${BASE}${path}`, location.origin)
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined && one !== '') url.searchParams.append(k, one)
  }
  const headers = { 'X-API-Key': opts.token ?? session.token() ?? '', ...(opts.headers ?? {}) }
  const init = { method, headers, cache: 'no-store', signal: opts.signal }
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json'
    init.body = JSON.stringify(opts.body)
  }
  const res = await fetch(url, init)
  const text = await res.text()
  let body
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = text
  }
  if (res.status === 401 && !opts.token) {
    session.signOut()
    throw new SignedOut(body?.message ?? 'the token was refused')
  }
  return { status: res.status, ok: res.ok, headers: res.headers, body }
}

/**
 * The `X-Change-Reason` header of a write: the reason's UTF-8 bytes, one header byte each (a header
 * carries bytes, and `fetch` takes only characters 0–255; the server reads the bytes as UTF-8), so
 * a reason in any script arrives as typed. No header for no reason.
 */
export function reasonHeaders(reason) {
  if (!reason) return {}
  let bytes = ''
  for (const b of new TextEncoder().encode(reason)) bytes += String.fromCharCode(b)
  return { 'X-Change-Reason': bytes }
}

/** Why a change reason cannot be sent (null when it can): one line, at most 2,000 characters. */
export const reasonProblem = (s) =>
  [...s].some((c) => (c < ' ' && c !== '\t') || c === '\x7f')
    ? 'The change reason must be one line without control characters.'
    : s.length > 2000
      ? 'The change reason is longer than 2,000 characters.'
      : null

/** Rule ids in paths: encoded once (an id may hold `/`). */
export const rulePath = (kind, id) => `/${kind}/${encodeURIComponent(id)}`

let perms = null
/**
 * What the token may do, from `GET /whoami`: `{ viewRules, manageRules, viewAlerts, manageAlerts, queryData }`
 * (all false if the server cannot say, so nothing is offered that might not work), and `user`: the
 * token's id (not its secret), which keys the preferences kept in localStorage.
 */
export async function permissions() {
  if (perms) return perms
  const r = await api('GET', '/whoami')
  const has = new Set(r.ok && Array.isArray(r.body?.permissions) ? r.body.permissions : [])
  const known = {
    viewRules: has.has('View Rules'),
    manageRules: has.has('Manage Rules'),
    viewAlerts: has.has('View Alerts'),
    manageAlerts: has.has('Manage Alerts'),
    queryData: has.has('Query Data'),
    user: r.ok && typeof r.body?.id === 'string' ? r.body.id : null,
  }
  // Kept for the session only when the server answered (a failed call is asked again next time).
  if (r.ok) perms = known
  return known
}

let loaded = null
/**
 * The server's rule kinds (`GET /kinds`: name, path, label, python, logTypeFilter, readOnlyFields,
 * template…) and log types (`GET /log-types`: name, table, fields), asked once a session; app.js
 * awaits it before a page is shown, so `catalog()` answers at once in every view.
 */
export async function loadCatalog() {
  if (loaded) return loaded
  const [k, l] = await Promise.all([api('GET', '/kinds'), api('GET', '/log-types')])
  if (!k.ok) throw new Error(`The rule kinds could not be read: ${problemText(k)}`)
  if (!l.ok) throw new Error(`The log types could not be read: ${problemText(l)}`)
  loaded = { kinds: k.body.kinds, logTypes: l.body.logTypes }
  return loaded
}

/** The catalog loadCatalog() read (empty lists before it has). */
export const catalog = () => loaded ?? { kinds: [], logTypes: [] }

/** One line for a failed answer: its message, and the first problems of a validation error. */
export function problemText(r) {
  const b = r.body
  const msg = typeof b === 'object' && b?.message ? b.message : `HTTP ${r.status}`
  return `${msg} (HTTP ${r.status})`
}
