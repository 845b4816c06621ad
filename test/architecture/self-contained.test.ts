// The project is self-contained: no file of it (docs, code, comments, test names, the console,
// examples) points into the specification's folder or at a path of the machine it was written on.
// Nor does any hold a merge's conflict markers (a resolved merge left them in a doc once). Every file
// git would commit is read: tracked ones and new ones not ignored.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'

const ROOT = path.resolve(import.meta.dirname, '..', '..')
// Spelt in two parts so that this file does not match itself.
const FORBIDDEN = [['shared', '/'].join(''), ['/wo', 'rk/'].join('')]

/** Every file git would commit: tracked ones and new ones not ignored. */
function projectFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)))
}

t.test('no file names the specification folder or a machine path', async (t) => {
  const files = projectFiles()
  t.ok(files.length > 100, 'the project files are listed')
  const hits: string[] = []
  for (const file of files) {
    const lines = fs.readFileSync(path.join(ROOT, file), 'latin1').split('\n')
    for (const [i, line] of lines.entries())
      if (FORBIDDEN.some((f) => line.includes(f))) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`)
  }
  t.same(hits, [], 'point to the copies the project ships (examples/, docs/) instead')
})

t.test('no file holds a merge conflict marker', async (t) => {
  // A conflict's first and last lines: seven `<` or `>` and a space at the start of a line (spelt
  // here in parts so that this file does not match itself; a lone row of `=` is also Markdown's).
  const marker = new RegExp(`^(?:${'<'.repeat(7)}|${'>'.repeat(7)}) `)
  const hits: string[] = []
  for (const file of projectFiles()) {
    const lines = fs.readFileSync(path.join(ROOT, file), 'latin1').split('\n')
    for (const [i, line] of lines.entries())
      if (marker.test(line.replace(/\r$/, ''))) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 60)}`)
  }
  t.same(hits, [], 'finish the merge: keep what both sides meant, then remove the markers')
})
