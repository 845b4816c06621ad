// Test fixture: the real service (src/main.ts createService: Git repository, data directory, token
// store, engines, python3, reconciler, log sources) without a socket. Requests are injected into the
// Koa app's callback by light-my-request and answered in TestServer's shape ({ status, headers,
// body, text }). Tests that need a real port (crashes, remotes, slow or hanging clients, raw bytes,
// keep-alive, sockets or memory of a real server) use startTestServer of rulekeeper.ts instead.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { inject } from 'light-my-request'
import type { Permission } from '../../src/auth/token-store.js'
import { TokenStore } from '../../src/auth/token-store.js'
import { createService, type Service } from '../../src/main.js'
import {
  type ApiResponse,
  bootstrapToken,
  makeTokenBeside,
  parseJsonOrUndefined,
  tempDir,
  type TestServerOptions,
  testStartOptions,
} from './rulekeeper.js'

export interface InProcessServer {
  service: Service
  /** The same service, under the name tests written for startTestServer use (`s.server.detection`). */
  server: Service
  dataDir: string
  gitdir: string
  /** Bootstrap token: View Rules + Manage Rules. */
  token: string
  /** Creates a token beside the service (as the CLI does) and waits until it is honoured. */
  makeToken(name: string, permissions: Permission[]): Promise<string>
  /** A request with the bootstrap token (a header given here replaces it). */
  request(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>
  /** A request with only the headers given (no token). */
  send(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>
  git(...args: string[]): string
  close(): Promise<void>
}

/**
 * One request through `handler` as httpRequest (rulekeeper.ts) sends it with fetch: an object body
 * as JSON with Content-Type application/json unless one is given, a Content-Length for every body
 * (0 for a POST or PUT without one, as fetch sends), Accept: *\/*; the text decoded as fetch's
 * text() decodes it (UTF-8, a leading BOM dropped, bad bytes replaced).
 */
async function injectRequest(
  handler: ReturnType<Service['app']['callback']>,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const h: Record<string, string> = { ...headers }
  const given = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name)
  if (!given('accept')) h.Accept = '*/*'
  let payload: string | Buffer | undefined
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body) : JSON.stringify(body)
    if (!given('content-type')) h['Content-Type'] = 'application/json'
  }
  if (!given('content-length') && (payload !== undefined || method === 'POST' || method === 'PUT'))
    h['Content-Length'] = String(payload === undefined ? 0 : Buffer.byteLength(payload))
  const res = await inject(handler, { method: method as 'GET', url: urlPath, headers: h, payload })
  const out = new Headers()
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one))
  }
  const text = new TextDecoder().decode(res.rawPayload)
  return { status: res.statusCode, headers: out, body: parseJsonOrUndefined(text), text }
}

export async function startInProcess(opts: TestServerOptions = {}): Promise<InProcessServer> {
  const dataDir = opts.dataDir ?? tempDir()
  const service = await createService(testStartOptions(opts, dataDir))
  const token = bootstrapToken(opts, dataDir)
  const gitdir = path.join(dataDir, 'repo.git')
  const tokens = new TokenStore(dataDir)
  const handler = service.app.callback()
  const send: InProcessServer['send'] = (method, urlPath, body, headers) =>
    injectRequest(handler, method, urlPath, body, headers)
  return {
    service,
    server: service,
    dataDir,
    gitdir,
    token,
    makeToken: (name, permissions) =>
      makeTokenBeside(
        tokens,
        service.config.api.basePath,
        (urlPath, headers) => send('GET', urlPath, undefined, headers),
        name,
        permissions,
      ),
    request: (method, urlPath, body, headers = {}) => send(method, urlPath, body, { 'X-API-Key': token, ...headers }),
    send,
    git: (...args) => execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8' }),
    close: () => service.close(),
  }
}
