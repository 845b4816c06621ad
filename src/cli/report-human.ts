// The human output of `test` and `validate`: a line per test ([PASS]/[FAIL]/[NOT RUN]) or per rule
// (validate), then every invalid and unsupported file with its problems or reason (and every file
// whose Python cannot run here), then the counts. `--show-failures-only` keeps failed and unrun
// tests, invalid files and files whose Python cannot run; the rest is only counted.
import { location, plural } from './output.js'
import type { RunReport } from './run-report.js'

export function printReport(cmd: 'test' | 'validate', report: RunReport, opts: { failuresOnly: boolean }): void {
  const out = (s: string) => process.stdout.write(`${s}\n`)
  const color = process.stdout.isTTY && !process.env.NO_COLOR
  const paint = (c: number, s: string) => (color ? `\u001b[${c}m${s}\u001b[0m` : s)
  // Files listed below with their problems (invalid, or their Python cannot run here).
  const invalidFiles = new Set(
    report.files.filter((f) => f.status === 'invalid' || f.python !== undefined).map((f) => f.path),
  )
  for (const r of report.rules) {
    if (!r.valid) {
      // Invalid files are listed below with the others; here only what failed a check that runs code.
      if (invalidFiles.has(r.path)) continue
      out(`${paint(31, '[INVALID]')} ${r.path}${r.id ? ` (${r.id})` : ''}`)
      for (const e of r.errors) out(`    ${location(e.file ?? r.path, e.line, e.column)} ${e.message}`)
      continue
    }
    if (!opts.failuresOnly) for (const w of r.warnings ?? []) out(`${paint(33, '[WARN]')} ${r.id}: ${w.message}`)
    if (cmd === 'validate' && !opts.failuresOnly) out(`${paint(32, '[VALID]')} ${r.id} (${r.path})`)
    if (r.coverage) out(`${paint(31, '[FAIL]')} ${r.id}: ${r.coverage}`)
    for (const t of r.tests) {
      if (t.passed === true && opts.failuresOnly) continue
      const tag =
        t.passed === true ? paint(32, '[PASS]') : t.passed === false ? paint(31, '[FAIL]') : paint(33, '[NOT RUN]')
      const why = t.passed === true ? '' : ` — ${t.error ?? `expected ${t.expected}, got ${t.actual}`}`
      out(`${tag} ${r.id}: ${t.name}${why}`)
    }
  }
  // Invalid and unsupported files, and valid ones whose Python cannot run here (or was not checked).
  // An unsupported file is not a failure: with failuresOnly it is only counted in the summary.
  const listed = report.files.filter(
    (f) =>
      f.status === 'invalid' ||
      (f.status === 'unsupported' && !opts.failuresOnly) ||
      (f.status === 'valid' && f.python !== undefined),
  )
  if (listed.length > 0) out('')
  for (const f of listed) {
    if (f.status === 'invalid') {
      out(`${paint(31, '[INVALID]')} ${f.path}${f.id ? ` (${f.id})` : ''}`)
      for (const p of f.problems) out(`    ${location(p.file ?? f.path, p.line, p.column)} ${p.message}`)
    } else if (f.status === 'valid') {
      const p = f.python!.problem
      out(`${paint(33, '[NOT RUN]')} ${f.path}${f.id ? ` (${f.id})` : ''}`)
      out(`    ${location(p.file ?? f.path, p.line, p.column)} ${p.message}`)
    } else out(`${paint(33, '[UNSUPPORTED]')} ${f.path}${f.analysisType ? ` (${f.analysisType})` : ''}: ${f.reason}`)
  }
  const s = report.summary
  const extra = [
    s.failedChecks ? `${plural(s.failedChecks, 'module')} failed to check` : '',
    s.insufficientTests ? `${plural(s.insufficientTests, 'rule')} with too few tests` : '',
  ].filter(Boolean)
  out('')
  const python = [
    s.pythonNotRun ? `${s.pythonNotRun} not run: a module the interpreter lacks` : '',
    s.pythonUnchecked ? `${s.pythonUnchecked} not checked` : '',
  ].filter(Boolean)
  out(
    `${plural(s.files, 'file')}: ${s.valid} valid${python.length ? ` (${python.join(', ')})` : ''}, ${s.invalid} invalid, ${s.unsupported} unsupported`,
  )
  out(
    `${plural(s.rules, 'rule')}${cmd === 'test' ? `; ${plural(s.tests, 'test')}: ${s.passed} passed, ${s.failed} failed, ${s.notRun} not run` : ''}${extra.length ? `; ${extra.join(', ')}` : ''}`,
  )
}
