// The commit object: parsed from and serialized to Git's text format (headers, blank line, message).
import { type CommitSignature, splitSignature } from './commit-signature.js'

export interface Person {
  name: string
  email: string
  /** Seconds since the epoch. */
  timestamp: number
  /** Minutes east of UTC, as git stores it (+0200 → 120). */
  tzOffsetMinutes: number
}

export interface CommitInfo {
  oid: string
  tree: string
  parents: string[]
  author: Person
  committer: Person
  message: string
  /** The `gpgsig` signature and the payload it signs (commit-signature.ts), when the commit is signed. */
  signature?: CommitSignature
}

function parsePerson(line: string): Person {
  const m = /^(.*) <(.*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(line)
  if (!m) return { name: line, email: '', timestamp: 0, tzOffsetMinutes: 0 }
  const sign = m[4] === '-' ? -1 : 1
  return {
    name: m[1]!,
    email: m[2]!,
    timestamp: Number(m[3]),
    tzOffsetMinutes: sign * (Number(m[5]) * 60 + Number(m[6])),
  }
}

export function parseCommit(oid: string, text: string): CommitInfo {
  const end = text.indexOf('\n\n')
  const header = end < 0 ? text : text.slice(0, end)
  const message = end < 0 ? '' : text.slice(end + 2)
  const info: CommitInfo = {
    oid,
    tree: '',
    parents: [],
    author: parsePerson(''),
    committer: parsePerson(''),
    message,
  }
  for (const line of header.split('\n')) {
    if (line.startsWith(' ')) continue // continuation of gpgsig / mergetag
    const sp = line.indexOf(' ')
    const key = line.slice(0, sp)
    const value = line.slice(sp + 1)
    if (key === 'tree') info.tree = value
    else if (key === 'parent') info.parents.push(value)
    else if (key === 'author') info.author = parsePerson(value)
    else if (key === 'committer') info.committer = parsePerson(value)
    else if (key === 'gpgsig') info.signature = splitSignature(text)
  }
  return info
}

/** Names and emails go into commit headers: strip what git forbids there (<, >, newlines). */
function cleanIdentity(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim() || 'unknown'
}

function formatPerson(p: Person): string {
  const off = Math.abs(p.tzOffsetMinutes)
  const tz = `${p.tzOffsetMinutes < 0 ? '-' : '+'}${String(Math.floor(off / 60)).padStart(2, '0')}${String(off % 60).padStart(2, '0')}`
  return `${cleanIdentity(p.name)} <${cleanIdentity(p.email)}> ${p.timestamp} ${tz}`
}

export function serializeCommit(c: Omit<CommitInfo, 'oid' | 'signature'>): Buffer {
  const lines = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`)]
  lines.push(`author ${formatPerson(c.author)}`, `committer ${formatPerson(c.committer)}`)
  const message = c.message.endsWith('\n') ? c.message : `${c.message}\n`
  return Buffer.from(`${lines.join('\n')}\n\n${message}`, 'utf8')
}
