// Plain git run as a named person (author and committer), for tests that change a repository the
// way a person or a merged pull request does, outside rulekeeper.
import { execFileSync } from 'node:child_process'

export interface Person {
  name: string
  email: string
  /** Author and committer date (any form git reads), else now. */
  date?: string
}

export const PAT: Person = { name: 'Pat', email: 'pat@example.com' }

/** The environment that makes git author and commit as `p`. */
export function personEnv(p: Person): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: p.name,
    GIT_AUTHOR_EMAIL: p.email,
    GIT_COMMITTER_NAME: p.name,
    GIT_COMMITTER_EMAIL: p.email,
    ...(p.date ? { GIT_AUTHOR_DATE: p.date, GIT_COMMITTER_DATE: p.date } : {}),
  }
}

/** Runs `git args…` in `cwd` as `person`; returns its standard output. */
export function gitAs(person: Person, cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...personEnv(person) } })
}
