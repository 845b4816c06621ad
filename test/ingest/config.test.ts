// The logSources:/audit: config sections: the defaults load, and every mistake is listed at once.
import t from 'tap'
import { checkAuditConfig, resolveLogSources } from '../../src/ingest/config.js'
import { loadServiceConfig } from '../../src/config-sections.js'
import { problemLine } from '../../src/config/problems.js'

t.test('the default config has the editor-audit source with the documented limits', async (t) => {
  const { sources, audit } = resolveLogSources(loadServiceConfig({}))
  t.same(sources, [
    {
      id: 'editor-audit',
      logType: 'Editor.Audit',
      auth: { method: 'Bearer', tokenEnv: 'RULEKEEPER_EDITOR_AUDIT_TOKEN' },
      limits: { maxCompressedBytes: 1048576, maxDecompressedBytes: 16777216, maxRecords: 10000 },
    },
  ])
  t.same(audit, { fileRollBytes: 134217728, dedupWindowHours: 24, maxErrorsInResponse: 20 })
})

t.test('loadConfig lists every log-source problem', async (t) => {
  const bad = {
    logSources: [
      {
        id: 'Bad Id',
        logType: 'Other.Type',
        auth: { method: 'HMAC', tokenEnv: 'lower' },
        limits: { maxRecords: 0, nope: 1 },
      },
      { id: 'dup', logType: 'Editor.Audit', auth: { method: 'Bearer', tokenEnv: 'A' } },
      { id: 'dup', logType: 'Editor.Audit', auth: { method: 'Bearer', tokenEnv: 'B' }, extra: true },
    ],
    audit: { dedupWindowHours: -1, surprise: 1 },
  }
  t.throws(() => loadServiceConfig({}, bad), { code: 'ConfigInvalid' })
  const problems = checkAuditConfig(bad).map(problemLine)
  for (const re of [
    /^logSources\[0\]\.id: must match/,
    /^logSources\[0\]\.logType: must be one of Editor.Audit/,
    /^logSources\[0\]\.auth\.method: must be one of Bearer/,
    /^logSources\[0\]\.auth\.tokenEnv: must name an environment variable/,
    /^logSources\[0\]\.limits\.maxRecords: must be a positive integer/,
    /^logSources\[0\]\.limits\.nope: unknown key/,
    /^logSources\[2\]\.id: "dup" is used twice/,
    /^logSources\[2\]\.extra: unknown key/,
    /^audit\.dedupWindowHours: must be a positive integer/,
    /^audit\.surprise: unknown key/,
  ])
    t.ok(
      problems.some((p) => re.test(p)),
      `lists ${re}`,
    )
  t.same(checkAuditConfig({ logSources: 'x' }), [{ path: ['logSources'], message: 'must be a list' }])
})
