// A scripted stand-in for a sandboxed Python process (no sandbox), for the warm worker's tests:
// `onLine` gets each line written to the process and answers with frames through `send`, which
// says nothing once the process is killed. Also the run limits those tests share.
import type { RunLimits } from '../../../src/engine/python/protocol.js'
import type { SandboxRun } from '../../../src/engine/python/sandbox-run.js'

export const SCRIPTED_LIMITS = {
  timeoutMs: 100,
  memoryBytes: 1 << 30,
  cpuSeconds: 60,
  fileBytes: 1 << 20,
  maxProcesses: 16,
  outputBytes: 1 << 20,
} as RunLimits

export function scriptedProcess(onLine: (line: string, send: (frames: string[]) => void) => void): SandboxRun {
  let ended: () => void = () => {}
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    ended = () => resolve({ code: null, signal: 'SIGKILL' })
  })
  const fake = {
    dead: false,
    attach(_job: unknown, on: { line(l: string): void }) {
      const send = (frames: string[]) =>
        setImmediate(() => {
          for (const f of frames) if (!fake.dead) on.line(f)
        })
      return (line: string) => onLine(line, send)
    },
    kill() {
      fake.dead = true
      ended()
    },
    exitStatus: () => exit,
    exited: () => exit.then(() => undefined),
  }
  return fake as unknown as SandboxRun
}
