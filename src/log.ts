// The service's structured logger (pino): JSON lines on stdout, nothing else, so a log shipper can
// parse every line; `pretty` renders the same records for a person (`serve --pretty`, or stdout on
// a terminal). Secrets are redacted by path so that a token, a password or an Authorization header
// can never reach a log line, whatever a caller logs.
import { pino, type Logger } from 'pino'

export type { Logger }

const REDACT_PATHS = [
  'token',
  'secret',
  'password',
  '*.token',
  '*.secret',
  '*.password',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-gitlab-token"]',
  'headers.authorization',
  'headers["x-api-key"]',
]

export interface LoggerOptions {
  level?: string
  destination?: NodeJS.WritableStream | number
  /** Human-readable lines instead of JSON (on `destination`, default stdout). */
  pretty?: boolean
  /** Colours in the pretty rendering (default: when stdout is a terminal). */
  colors?: boolean
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.destination ?? 1
  const stream =
    typeof dest === 'number' ? pino.destination({ fd: dest, sync: false }) : (dest as unknown as pino.DestinationStream)
  const options = {
    level: opts.level ?? 'info',
    base: { service: 'rulekeeper' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  if (!opts.pretty) return pino(options, stream)
  const colors = opts.colors ?? (typeof dest === 'number' && dest === 1 && process.stdout.isTTY === true)
  return pino(options, { write: (line: string) => void stream.write(renderPretty(line, colors)) })
}

const LEVELS: Record<number, [string, string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
}
const HIDDEN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname'])

/** One JSON log line as `12:00:01.234 INFO  message key=value …` (what pino-pretty shows, in short). */
function renderPretty(line: string, colors = false): string {
  let rec: Record<string, unknown>
  try {
    rec = JSON.parse(line)
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`
  }
  const [label, color] = LEVELS[rec.level as number] ?? [String(rec.level), '0']
  const paint = (s: string, c: string) => (colors ? `\u001b[${c}m${s}\u001b[0m` : s)
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 23) : ''
  const fields = Object.entries(rec)
    .filter(([k]) => !HIDDEN.has(k))
    .map(([k, v]) => `${paint(k, '2')}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
  return `${paint(time, '2')} ${paint(label, color)} ${String(rec.msg ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}\n`
}
