// The JSON answer of a replay, written piece by piece: `{ records, matches, rules, alertCount,
// alerts }` as text chunks of about 64 KiB, the alerts built one by one as the text reaches them, so
// the answer never exists whole in memory (the API streams the chunks, the CLI writes them to stdout).
// Without `alerts` (a token that may not see alert content) the field is left out.
import type { ReplayResult } from './replay.js'

const CHUNK_CHARS = 64 * 1024

/** The chunks of the answer; `indent` as JSON.stringify's (the CLI's --json is indented by 2). */
export function* replayJsonChunks(result: ReplayResult, o: { alerts: boolean; indent?: number }): Generator<string> {
  const ind = o.indent ?? 0
  const nl = ind ? '\n' : ''
  const pad = ' '.repeat(ind)
  const colon = ind ? ': ' : ':'
  const field = (k: string, v: unknown, last = false) =>
    `${pad}${JSON.stringify(k)}${colon}${JSON.stringify(v, null, ind).replaceAll('\n', `\n${pad}`)}${last ? '' : ','}${nl}`
  let out = `{${nl}`
  out += field('records', result.records)
  out += field('matches', result.matches)
  out += field('rules', result.rules)
  out += field('alertCount', result.alertCount, !o.alerts)
  if (o.alerts) {
    out += `${pad}"alerts"${colon}[`
    let first = true
    for (const alert of result.alerts()) {
      const text = JSON.stringify(alert, null, ind).replaceAll('\n', `\n${pad}${pad}`)
      out += `${first ? '' : ','}${nl}${pad}${pad}${text}`
      first = false
      if (out.length >= CHUNK_CHARS) {
        yield out
        out = ''
      }
    }
    out += `${first ? '' : `${nl}${pad}`}]${nl}`
  }
  yield `${out}}`
}
