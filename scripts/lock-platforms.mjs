// Completes package-lock.json for Biome's per-platform binaries. The registry these machines reach
// serves only the Linux glibc builds of @biomejs/cli-*, so `npm install` leaves the other platforms
// out of the lock, and `npm ci` then refuses the lock as out of sync. This adds the missing entries
// (name, version, os, cpu, libc, optional) without a tarball: npm never fetches a package whose
// platform does not match. Run after any `npm install` that changes the lock (CONTRIBUTING.md).
import fs from 'node:fs'

const LOCK = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(fs.readFileSync(LOCK, 'utf8'))
const packages = lock.packages
let added = 0
for (const [key, entry] of Object.entries({ ...packages })) {
  if (!key.endsWith('node_modules/@biomejs/biome')) continue
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = key.replace(/@biomejs\/biome$/, name)
    if (packages[at]) continue
    const m = /^@biomejs\/cli-(android|darwin|linux|win32)-(arm64|x64)(-musl)?$/.exec(name)
    if (!m) throw new Error(`unknown Biome platform package ${name}`)
    packages[at] = {
      version,
      cpu: [m[2]],
      dev: true,
      license: entry.license,
      optional: true,
      os: [m[1]],
      ...(m[3] ? { libc: ['musl'] } : {}),
      engines: entry.engines,
    }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)))
fs.writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`lock-platforms: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`)
