// The console's static route (src/api/console-route.ts): `/` and the console's files answer with the
// strict CSP and the other security headers; no path reaches another file (traversal, encodings,
// dotfiles, the API's source); index.html holds no inline script; the base path is written into the
// page; and every asset together stays under quality.md's 500 KB gzipped.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { consoleAssets, CONSOLE_DIR } from '../../src/api/console-route.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'

let s: InProcessServer
t.before(async () => {
  s = await startInProcess()
})
t.teardown(() => s.close())

t.test('/ is the console, with the security headers', async (t) => {
  const r = await s.send('GET', '/')
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), /^text\/html/)
  const csp = r.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from the console only: no unsafe-inline, no unsafe-eval')
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/)
  t.match(csp, /frame-ancestors 'none'/)
  t.equal(r.headers.get('x-content-type-options'), 'nosniff')
  t.equal(r.headers.get('x-frame-options'), 'DENY')
  t.equal(r.headers.get('referrer-policy'), 'no-referrer')
  t.notMatch(r.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline <script>')
  t.notMatch(r.text, /\son[a-z]+=/i, 'no inline event handler')
  t.notMatch(r.text, /\sstyle=/i, 'no inline style')
  t.match(r.text, /<meta name="rulekeeper-base-path" content="">/)
  const js = await s.send('GET', '/console/app.js')
  t.equal(js.status, 200)
  t.match(js.headers.get('content-type'), /^text\/javascript/)
  t.equal(js.headers.get('x-content-type-options'), 'nosniff')
  const yaml = await s.send('GET', '/console/vendor/yaml/index.js')
  t.equal(yaml.status, 200, 'the yaml package’s browser build is served')
})

t.test('gzip when asked, the same bytes; 304 on a matching ETag', async (t) => {
  const plain = await s.send('GET', '/console/style.css', undefined, { 'Accept-Encoding': 'identity' })
  t.equal(plain.headers.get('content-encoding'), null)
  const etag = plain.headers.get('etag')!
  const again = await s.send('GET', '/console/style.css', undefined, { 'If-None-Match': etag })
  t.equal(again.status, 304)
  const zipped = consoleAssets('').get('/console/style.css')!
  t.equal(gunzipSync(zipped.gzip).toString(), plain.text)
})

t.test('only the console’s files: no traversal, no other file', async (t) => {
  const refused = [
    '/console/../package.json',
    '/console/%2e%2e/package.json',
    '/console/%2E%2E%2Fpackage.json',
    '/console/..%2fsrc/main.ts',
    '/console/..%5c..%5cpackage.json',
    '/console/vendor/yaml/../../package.json',
    '/console/vendor/yaml/%2e%2e/%2e%2e/package.json',
    '/console//etc/passwd',
    '/console/%00app.js',
    '/console/app.js%00.html',
    '/console/app.js/',
    '/console/APP.JS',
    '/console/',
    '/console/views',
    '/console/.gitignore',
    '/console/index.html.bak',
    '/src/api/app.ts',
    '/package.json',
    '/node_modules/yaml/package.json',
    '/console/vendor/yaml/../../../../src/api/console-route.ts',
    '/..%2f..%2fetc%2fpasswd',
  ]
  for (const p of refused) {
    const r = await s.send('GET', p)
    t.equal(r.status, 404, p)
    t.notMatch(r.text, /"name": "rulekeeper"|import |root:x:/, `${p}: no file content`)
  }
  // Every served URL is a file of console/ or of the yaml package's browser build, nothing else.
  const yamlDir = path.resolve(CONSOLE_DIR, '..', 'node_modules', 'yaml', 'browser', 'dist')
  for (const url of consoleAssets('').keys()) {
    if (url === '/' || url === '/index.html') continue
    const rel = url.replace(/^\/console\//, '')
    const own = fs.existsSync(path.join(CONSOLE_DIR, rel))
    const vendored =
      rel.startsWith('vendor/yaml/') && fs.existsSync(path.join(yamlDir, rel.slice('vendor/yaml/'.length)))
    t.ok(own || vendored, `${url} is a console file`)
  }
  const post = await s.send('POST', '/console/app.js', '{}')
  t.equal(post.status, 404, 'only GET and HEAD')
})

t.test('the base path is written into the page (api.basePath /v1)', async (t) => {
  const v1 = await startInProcess({ config: { api: { basePath: '/v1' } } })
  t.teardown(() => v1.close())
  const r = await v1.send('GET', '/')
  t.match(r.text, /<meta name="rulekeeper-base-path" content="\/v1">/)
  t.equal((await v1.send('GET', '/v1/')).status, 404, 'the console stays at the root')
  const hostile = consoleAssets('/"><script>alert(1)</script>').get('/')!
  t.notMatch(hostile.body.toString(), /<script>alert/, 'a base path cannot inject markup')
})

t.test('assets: ≤ 500 KB gzipped in all (quality.md)', async (t) => {
  let gz = 0
  let raw = 0
  for (const [url, a] of consoleAssets('')) {
    if (url === '/index.html') continue
    gz += a.gzip.length
    raw += a.body.length
  }
  t.comment(`console assets: ${(raw / 1024).toFixed(1)} KB, ${(gz / 1024).toFixed(1)} KB gzipped`)
  t.ok(gz <= 500 * 1024, `${gz} bytes gzipped`)
})
