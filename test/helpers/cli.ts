// Runs the real `rulekeeper` CLI in a child process (from the TypeScript sources through tsx, so
// the tests never depend on a stale build) and returns its exit code and output.
import { spawn } from 'node:child_process'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // tsx by its resolved location, so the CLI can run in any folder (a bare `tsx` resolves from cwd).
    const tsx = import.meta.resolve('tsx')
    const child = spawn(process.execPath, ['--import', tsx, path.join(ROOT, 'test/helpers/cli-entry.ts'), ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
