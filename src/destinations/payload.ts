// What one delivery sends: a webhook gets the alert as `GET /alerts/{id}` shows it (JSON), signed
// with `X-Rulekeeper-Signature: sha256=<hex HMAC-SHA256 of the body bytes>` when the destination
// names a secret; Slack gets an incoming-webhook payload (text + blocks). Every request carries
// `Idempotency-Key: <alert id>`, the same on every attempt and redelivery.
import { createHmac } from 'node:crypto'
import type { Destination } from './config.js'

export interface OutgoingRequest {
  body: string
  headers: Record<string, string>
}

const SEVERITY_MARK: Record<string, string> = {
  CRITICAL: ':red_circle:',
  HIGH: ':large_orange_circle:',
  MEDIUM: ':large_yellow_circle:',
  LOW: ':large_blue_circle:',
  INFO: ':white_circle:',
}

/** Slack's mrkdwn escapes (&, <, >): a title cannot inject a link or a mention. */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s)

export function slackPayload(alert: Record<string, unknown>): Record<string, unknown> {
  const str = (k: string) => (typeof alert[k] === 'string' ? (alert[k] as string) : '')
  const severity = str('severity')
  const title = str('title') || str('ruleId')
  const text = `[${severity}] ${title}`
  const fields = [
    `*Severity*\n${SEVERITY_MARK[severity] ?? ''} ${esc(severity)}`,
    `*Rule*\n\`${esc(str('ruleId'))}\``,
    `*Events*\n${String(alert.eventCount ?? '')}`,
    `*First event*\n${esc(str('firstEventTime'))}`,
  ].map((t) => ({ type: 'mrkdwn', text: t }))
  const blocks: Array<Record<string, unknown>> = [
    { type: 'header', text: { type: 'plain_text', text: clip(text, 150), emoji: true } },
    { type: 'section', fields },
  ]
  const desc = str('description')
  if (desc) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(esc(desc), 2900) } })
  const runbook = str('runbook')
  if (runbook)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(`*Runbook*\n${esc(runbook)}`, 2900) } })
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `alert \`${esc(str('id'))}\` · rulekeeper` }] })
  return { text: clip(esc(text), 3000), blocks }
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

export function buildRequest(dest: Destination, alert: Record<string, unknown>, attempt: number): OutgoingRequest {
  const body = JSON.stringify(dest.type === 'slack' ? slackPayload(alert) : alert)
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'idempotency-key': String(alert.id),
    'user-agent': 'rulekeeper',
    'x-rulekeeper-attempt': String(attempt),
  }
  if (dest.secret !== null) headers['x-rulekeeper-signature'] = signature(dest.secret, body)
  return { body, headers }
}
