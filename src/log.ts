// The service's structured logger (pino, JSON lines). Secrets are redacted by path so that a token,
// a password or an Authorization header can never reach a log line, whatever a caller logs.
import { pino, type Logger } from 'pino'

export type { Logger }

export const REDACT_PATHS = [
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

export function createLogger(opts: { level?: string; destination?: NodeJS.WritableStream | number } = {}): Logger {
  const dest = opts.destination ?? 1
  return pino(
    {
      level: opts.level ?? 'info',
      base: { service: 'rulekeeper' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    typeof dest === 'number' ? pino.destination({ fd: dest, sync: false }) : (dest as pino.DestinationStream),
  )
}
