// The `Editor.Audit` log type: the JSON Schema of the envelope and of every event kind the spec
// lists (generated from one kinds table so that the schema, the integer coercion and the e-mail
// indicators cannot drift apart), each property described (editor-audit-meanings.ts), compiled
// once with ajv.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { EDITOR_AUDIT_FIELD_MEANINGS } from './editor-audit-meanings.js'

/** The log type's name: `p_log_type`, the data folder under `logs/`, a rule's `LogTypes` entry. */
export const EDITOR_AUDIT = 'Editor.Audit'

/** s string, b boolean, i integer (JSON number or decimal string), sa list of strings. */
type FieldType = 's' | 'b' | 'i' | 'sa'

export const EDITOR_AUDIT_KINDS: Record<string, Record<string, FieldType>> = {
  add_user: { source: 's', team_id: 's', invited_by_user_id: 's', role: 's', user_email: 's' },
  api_key: {
    action: 's',
    api_key_id: 's',
    service_account_id: 's',
    service_account_name: 's',
    repo_scope_enabled: 'b',
  },
  reviewbot_team_settings: { new_value: 's', setting_name: 's' },
  invite_email_sent: {
    invite_id: 's',
    personal_message: 's',
    role: 's',
    sender_user_id: 's',
    recipient_email: 's',
    sender_email: 's',
  },
  invite_link: {
    action: 's',
    creator_user_id: 's',
    invite_id: 's',
    role: 's',
    creator_email: 's',
    expires_in_seconds: 'i',
  },
  login: { login_type: 's', success: 'b' },
  mcp_server_config: { action: 's', scope: 's', server_name: 's', server_type: 's' },
  remove_user: { user_email: 's' },
  service_account: { action: 's', service_account_id: 's', service_account_name: 's' },
  team_api_key: { action: 's' },
  team_command: { action: 's', command_id: 's', command_name: 's', is_active: 'b' },
  team_hook: {
    action: 's',
    hook_id: 's',
    hook_step: 's',
    hook_type: 's',
    script_content: 's',
    script_name: 's',
    is_active: 'b',
    operating_systems: 'sa',
  },
  team_marketplace: {
    action: 's',
    marketplace_id: 's',
    marketplace_name: 's',
    marketplace_display_name: 's',
    plugin_id: 's',
    team_id: 's',
    new_auto_reindex: 'b',
    old_auto_reindex: 'b',
    plugins_created: 'i',
    plugins_deprecated: 'i',
    plugins_indexed: 'i',
    plugins_updated: 'i',
  },
  team_rule: { action: 's', rule_id: 's', rule_name: 's', is_active: 'b', is_required: 'b' },
  team_settings: { setting_name: 's', old_value: 's', new_value: 's' },
  update_user_role: { old_role: 's', new_role: 's', user_email: 's' },
  user_api_key: { action: 's' },
  user_spend_limit: { new_limit_cents: 'i', old_limit_cents: 'i', target_user_email: 's' },
}

/** The detail fields that are e-mail indicators (p_any_emails), besides the envelope's user_email. */
export const EMAIL_FIELDS: Record<string, string[]> = {
  add_user: ['user_email'],
  invite_email_sent: ['recipient_email', 'sender_email'],
  invite_link: ['creator_email'],
  remove_user: ['user_email'],
  update_user_role: ['user_email'],
  user_spend_limit: ['target_user_email'],
}

export const ENVELOPE_KEYS = new Set(['ip_address', 'team_id', 'user_email', 'metadata'])

const INTEGER_TEXT = '^-?[0-9]{1,16}$'

function fieldSchema(t: FieldType): Record<string, unknown> {
  switch (t) {
    case 's':
      return { type: 'string' }
    case 'b':
      return { type: 'boolean' }
    case 'sa':
      return { type: 'array', items: { type: 'string' } }
    case 'i':
      return { anyOf: [{ type: 'integer' }, { type: 'string', pattern: INTEGER_TEXT }] }
  }
}

/** The property schema at a dotted path, with the field's meaning as its description. */
function described(at: string, schema: Record<string, unknown>): Record<string, unknown> {
  const description = EDITOR_AUDIT_FIELD_MEANINGS[at]
  return description === undefined ? schema : { ...schema, description }
}

/** Unlisted fields are allowed everywhere: the vendor adds fields over time and they are kept. */
export const editorAuditSchema = {
  $id: EDITOR_AUDIT,
  type: 'object',
  required: ['metadata'],
  properties: {
    ip_address: described('ip_address', { type: 'string' }),
    team_id: described('team_id', { type: 'string' }),
    user_email: described('user_email', { type: 'string' }),
    metadata: described('metadata', {
      type: 'object',
      required: ['timestamp'],
      properties: {
        id: described('metadata.id', { type: 'string' }),
        timestamp: described('metadata.timestamp', { type: 'string', format: 'date-time' }),
        context: described('metadata.context', {
          type: 'object',
          properties: {
            auth_id: described('metadata.context.auth_id', { type: 'string' }),
            ghost_mode: described('metadata.context.ghost_mode', { type: 'boolean' }),
            privacy_mode: described('metadata.context.privacy_mode', { type: 'string' }),
            request_id: described('metadata.context.request_id', { type: 'string' }),
          },
        }),
      },
    }),
    ...Object.fromEntries(
      Object.entries(EDITOR_AUDIT_KINDS).map(([kind, fields]) => [
        kind,
        described(kind, {
          type: 'object',
          properties: Object.fromEntries(
            Object.entries(fields).map(([f, t]) => [f, described(`${kind}.${f}`, fieldSchema(t))]),
          ),
        }),
      ]),
    ),
  },
}

let compiled: ValidateFunction | undefined

export function editorAuditValidator(): ValidateFunction {
  if (compiled) return compiled
  // allErrors off: the first problem is enough for the reason, and validation stays fast.
  const ajv = new Ajv({ allErrors: false, strict: false })
  const addFormats = addFormatsModule as unknown as (a: Ajv, f: string[]) => Ajv
  addFormats(ajv, ['date-time'])
  compiled = ajv.compile(editorAuditSchema)
  return compiled
}

/** One readable reason from ajv's first error, phrased with the record's own field path. */
export function describeSchemaError(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return `the record does not match the ${EDITOR_AUDIT} schema`
  // Under anyOf ajv lists each branch first; the anyOf entry itself is the one to report.
  const e = errors.find((x) => x.keyword === 'anyOf') ?? errors[0]!
  const where = e.instancePath.slice(1).replaceAll('/', '.')
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty
    return `${where ? `${where}.` : ''}${missing} is required`
  }
  if (e.keyword === 'anyOf') return `${where} must be an integer (a JSON number or a decimal string)`
  if (e.keyword === 'format') return `${where} must be an RFC 3339 date-time, e.g. 2026-11-20T08:01:12.310Z`
  if (e.keyword === 'type') {
    const t = (e.params as { type: string }).type
    return `${where || 'the record'} must be ${t === 'array' ? 'an array' : t === 'object' ? 'an object' : `a ${t}`}`
  }
  return `${where || 'the record'} ${e.message ?? 'is invalid'}`
}
