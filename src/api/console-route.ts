// The console's static files (docs/console.md): `GET /` is console/index.html, `/console/<file>` a
// file of the console/ folder, `/console/vendor/yaml/<file>` the browser build of the `yaml` package.
// Only the files listed at start are served (a path is a key of that table, never joined to a folder),
// gzip-compressed once, with a strict Content-Security-Policy (no inline script or style).
import fs from 'node:fs'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type Koa from 'koa'
import type { ApiState } from './context.js'
import { notFound } from '../errors.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

/** The console's own headers; the API's JSON answers are not pages and keep theirs. */
export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  'Cache-Control': 'no-cache',
}

interface Asset {
  type: string
  body: Buffer
  gzip: Buffer
  etag: string
}

const HERE = path.dirname(fileURLToPath(import.meta.url))
/** console/ at the package root: two folders up from both src/api/ and dist/api/. */
export const CONSOLE_DIR = path.resolve(HERE, '..', '..', 'console')

function yamlBrowserDir(): string {
  const main = createRequire(import.meta.url).resolve('yaml') // <pkg>/dist/index.js
  return path.join(path.dirname(main), '..', 'browser', 'dist')
}

/** Regular files under `dir` with a known type, by URL (`prefix` + the relative path); dotfiles skipped. */
function listFiles(dir: string, prefix: string, out: Map<string, string>): void {
  if (!fs.existsSync(dir)) return
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue
    const full = path.join(dir, e.name)
    if (e.isDirectory()) listFiles(full, `${prefix}${e.name}/`, out)
    else if (e.isFile() && TYPES[path.extname(e.name)]) out.set(`${prefix}${e.name}`, full)
  }
}

function asset(file: string, body: Buffer): Asset {
  return {
    type: TYPES[path.extname(file)]!,
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }
}

/** Every URL the console answers, with its bytes (the base path is written into index.html's meta). */
export function consoleAssets(basePath: string, dir = CONSOLE_DIR): Map<string, Asset> {
  const files = new Map<string, string>()
  listFiles(dir, '/console/', files)
  listFiles(yamlBrowserDir(), '/console/vendor/yaml/', files)
  const out = new Map<string, Asset>()
  for (const [url, file] of files) {
    if (url === '/console/index.html') continue
    out.set(url, asset(file, fs.readFileSync(file)))
  }
  const indexFile = path.join(dir, 'index.html')
  if (fs.existsSync(indexFile)) {
    const escaped = basePath.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
    const html = fs.readFileSync(indexFile, 'utf8').replace('{{BASE_PATH}}', escaped)
    const index = asset(indexFile, Buffer.from(html))
    out.set('/', index)
    out.set('/index.html', index)
  }
  return out
}

/** GET/HEAD of a console URL; every other request goes on to the API's routers. */
export function consoleRoute(basePath: string): Koa.Middleware<ApiState> {
  const assets = consoleAssets(basePath)
  return (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    const a = assets.get(ctx.path)
    if (!a) {
      // Anything else under /console/ is the console's 404, with its headers, not an API route.
      if (!ctx.path.startsWith('/console/')) return next()
      ctx.set(CONSOLE_HEADERS)
      throw notFound('no such console file')
    }
    ctx.set(CONSOLE_HEADERS)
    ctx.set('ETag', a.etag)
    ctx.vary('Accept-Encoding')
    ctx.type = a.type
    if (ctx.get('If-None-Match') === a.etag) {
      ctx.status = 304
      return
    }
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip')
      ctx.body = a.gzip
    } else ctx.body = a.body
  }
}
