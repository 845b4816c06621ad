// The log-type registry: Panther's table naming (pinned against table names Panther's own queries
// use), what listLogTypes serves (GET /log-types), the standard fields an entry lists against what
// its normalizer really adds (and the prefix detection reads from the stored tail), the event-time
// field, and a log source that stores and checks records by the entry it is opened on, not by a
// log type of its own.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { Registry } from 'prom-client'
import t from 'tap'
import { readStandardTail } from '../../src/detect/stored-log.js'
import { resolveLogSources } from '../../src/ingest/config.js'
import { createIngestMetrics } from '../../src/ingest/ingest-metrics.js'
import { LogSource } from '../../src/ingest/log-source.js'
import { type LogType, PANTHER_LOGS, STORED_TAIL_FIELDS, storedLine, tableName } from '../../src/ingest/log-type.js'
import { findLogType, listLogTypes, logTypeNames } from '../../src/ingest/log-types.js'
import { createLogger } from '../../src/log.js'
import { EXAMPLES, makeRecord, tempDataDir } from './helpers.js'

const editorAudit = (): LogType => {
  const lt = findLogType('Editor.Audit')
  if (!lt) throw new Error('Editor.Audit is not registered')
  return lt
}

t.test("table names follow Panther's rule: dots become underscores, all lower case", async (t) => {
  // Table names as Panther's log processor and its published queries spell them.
  t.equal(tableName('AWS.CloudTrail'), 'aws_cloudtrail')
  t.equal(tableName('Okta.SystemLog'), 'okta_systemlog')
  t.equal(tableName('GSuite.Reports'), 'gsuite_reports')
  t.equal(tableName('Custom.My.Logs'), 'custom_my_logs', 'every dot, not only the first')
  t.equal(PANTHER_LOGS, 'panther_logs.public')
  const lt = editorAudit()
  t.equal(lt.table, 'editor_audit')
  t.equal(lt.qualifiedTable, 'panther_logs.public.editor_audit')
})

t.test('the registry holds Editor.Audit, and only it', async (t) => {
  t.same(logTypeNames(), ['Editor.Audit'])
  t.equal(findLogType('Editor.Audit')?.name, 'Editor.Audit')
  t.equal(findLogType('editor.audit'), undefined, 'names are exact')
  t.equal(findLogType('AWS.CloudTrail'), undefined)
})

t.test('listLogTypes: name, qualified table, and every field with type, required and description', async (t) => {
  const list = listLogTypes()
  t.equal(list.length, 1)
  const [lt] = list
  t.same(Object.keys(lt!).sort(), ['fields', 'name', 'table'])
  t.equal(lt!.name, 'Editor.Audit')
  t.equal(lt!.table, 'panther_logs.public.editor_audit')
  t.ok(lt!.fields.length > 100, 'the envelope, the 18 kinds and the standard fields')
  for (const f of lt!.fields) {
    t.same(Object.keys(f).sort(), ['description', 'name', 'required', 'type'], `${f.name}: the element shape`)
    t.ok(['string', 'boolean', 'integer', 'list of strings', 'object'].includes(f.type), `${f.name}: ${f.type}`)
    t.type(f.required, 'boolean')
    t.ok(f.description.length > 0, `${f.name} is described`)
  }
  const byName = new Map(lt!.fields.map((f) => [f.name, f]))
  t.equal(byName.size, lt!.fields.length, 'each field once')
  t.same(byName.get('metadata.timestamp'), {
    name: 'metadata.timestamp',
    type: 'string',
    required: true,
    description: 'when the event happened',
  })
  t.match(byName.get('user_spend_limit.new_limit_cents'), { type: 'integer', required: false })
  t.match(byName.get('team_hook.operating_systems'), { type: 'list of strings' })
  t.match(byName.get('login.success'), { type: 'boolean' })
  t.match(byName.get('p_any_emails'), { type: 'list of strings', required: true })
  const names = lt!.fields.map((f) => f.name)
  t.same(
    names.slice(-9),
    editorAudit().standardFields.map((f) => f.name),
    'the standard fields last, in the stored order',
  )
  // The caller gets copies: changing them does not change the registry.
  lt!.fields[0]!.description = 'changed'
  t.not(listLogTypes()[0]!.fields[0]!.description, 'changed')
})

t.test('the standard fields listed are those normalize adds, in the stored order', async (t) => {
  const lt = editorAudit()
  const lines = (await readFile(path.join(EXAMPLES, 'valid.ndjson'), 'utf8')).split('\n').filter((l) => l !== '')
  for (const [i, line] of lines.entries()) {
    const verdict = lt.normalize(JSON.parse(line), {
      sourceId: 's',
      parseTime: '2026-11-20T09:00:00.000Z',
      rowId: `r${i}`,
    })
    if (!verdict.ok) throw new Error(verdict.reason)
    const added = Object.keys(verdict.stored).filter((k) => k.startsWith('p_'))
    t.same(
      added,
      lt.standardFields.map((f) => f.name),
      `record ${i}`,
    )
    // The tail detection reads: the first standard fields, as read back from the stored line.
    const tail = readStandardTail(storedLine(verdict))
    t.same(
      tail,
      STORED_TAIL_FIELDS.map((f) => verdict.stored[f]),
      `record ${i}: the stored tail`,
    )
  }
  t.same(
    lt.standardFields.slice(0, STORED_TAIL_FIELDS.length).map((f) => f.name),
    [...STORED_TAIL_FIELDS],
    'an entry starts its standard fields with the tail detection reads',
  )
})

t.test('p_event_time comes from the event-time field, in UTC', async (t) => {
  const lt = editorAudit()
  t.equal(lt.eventTimeField, 'metadata.timestamp')
  const record = makeRecord('e1', '2026-11-20T10:00:00.5+02:00')
  const verdict = lt.normalize(record, { sourceId: 's', parseTime: 'now', rowId: 'r1' })
  t.ok(verdict.ok)
  if (verdict.ok) {
    t.equal(verdict.stored.p_event_time, '2026-11-20T08:00:00.500Z')
    t.equal(verdict.eventTime, '2026-11-20T08:00:00.500Z')
  }
  const field = lt.recordFields.find((f) => f.name === lt.eventTimeField)
  t.match(field, { required: true, type: 'string' }, 'the event-time field is a required field of the schema')
})

t.test('a log source stores and checks records by the registry entry it is opened on', async (t) => {
  const dataDir = await tempDataDir(t)
  // A stand-in entry: every object is accepted, its `at` is the event time.
  const probe: LogType = {
    name: 'Probe.Events',
    table: tableName('Probe.Events'),
    qualifiedTable: `${PANTHER_LOGS}.${tableName('Probe.Events')}`,
    schema: { type: 'object' },
    recordFields: [],
    standardFields: [],
    eventTimeField: 'at',
    normalize(value, ctx) {
      const v = value as Record<string, unknown>
      if (typeof v.at !== 'string') return { ok: false, reason: 'at is required' }
      const eventMs = Date.parse(v.at)
      const eventTime = new Date(eventMs).toISOString()
      const stored = {
        ...v,
        p_log_type: 'Probe.Events',
        p_event_time: eventTime,
        p_parse_time: ctx.parseTime,
        p_row_id: ctx.rowId,
      }
      return { ok: true, stored, eventMs, eventTime, id: undefined, unknownKind: false }
    },
  }
  const [config] = resolveLogSources({
    logSources: [{ id: 'probe', logType: 'Editor.Audit', auth: { method: 'Bearer', tokenEnv: 'PROBE_TOKEN' } }],
  }).sources
  const source = await LogSource.open({
    config: config!,
    logType: probe,
    settings: resolveLogSources({}).audit,
    dataDir,
    env: { PROBE_TOKEN: 'probe-token-0123456789' },
    logger: createLogger({ level: 'silent' }),
    metrics: createIngestMetrics(new Registry()),
  })
  t.teardown(() => source.close())
  const result = await source.storeDelivery({
    form: 'ndjson',
    suspectUnicode: false,
    items: [
      { index: 0, line: 1, value: { at: '2026-11-20T08:30:00Z', what: 'no Editor.Audit envelope' } },
      { index: 1, line: 2, value: { metadata: { timestamp: '2026-11-20T08:30:00Z' }, login: {} } },
    ],
  })
  t.match(result, { accepted: 1, rejected: 1 })
  t.match(result.errors, [{ index: 1, message: 'at is required' }], "the entry's check, not Editor.Audit's")
  const hourDir = path.join(dataDir, 'logs', 'Probe.Events', 'dt=2026-11-20', 'hour=08')
  const files = await readdir(hourDir)
  t.equal(files.length, 1, "stored under the entry's name")
  const stored = JSON.parse((await readFile(path.join(hourDir, files[0]!), 'utf8')).trim())
  t.match(stored, { what: 'no Editor.Audit envelope', p_log_type: 'Probe.Events' })
  const rejected = await readdir(path.join(dataDir, 'logs', '_rejected'))
  t.same(rejected, ['Probe.Events'], "rejected lines too go under the entry's name")
})
