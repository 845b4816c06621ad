// The OpenAPI 3.0.3 document of every route the app serves, assembled from its parts by tag: the
// rule kinds (openapi-rules.ts, generated from the same JSON Schemas the server validates with, so
// the contract and the checks cannot disagree), their history, operations, alerts, rule errors,
// correlation runs, the kinds and log types offered, and the root routes; the shared shapes (Error
// with its stable `code`) are in openapi-common.ts.
import { KINDS } from '../rules/kinds/index.js'
import { ALERT_SCHEMAS, alertPaths } from './openapi-alerts.js'
import { CATALOG_SCHEMAS, catalogPaths } from './openapi-catalog.js'
import { ERROR_SCHEMAS, type Obj } from './openapi-common.js'
import { CORRELATION_RUN_SCHEMAS, correlationRunPaths } from './openapi-correlation-run.js'
import { HISTORY_SCHEMAS } from './openapi-history.js'
import { INVALID_FILE_SCHEMAS, invalidFilePaths } from './openapi-invalid-files.js'
import { OPERATIONS_SCHEMAS, operationsPaths } from './openapi-operations.js'
import { documentPath, ROOT_SCHEMAS, rootPaths } from './openapi-root-paths.js'
import { QUERY_SCHEMAS, queryPaths } from './openapi-queries.js'
import { RULE_ERROR_SCHEMAS, ruleErrorPaths } from './openapi-rule-errors.js'
import { RULE_HEALTH_SCHEMAS, ruleHealthPaths } from './openapi-rule-health.js'
import { PLAN_SCHEMAS, planPaths } from './openapi-plans.js'
import { PREVIEW_SCHEMAS, previewPaths } from './openapi-preview.js'
import { SCHEDULED_QUERY_RUN_SCHEMAS, scheduledQueryRunPaths } from './openapi-scheduled-query-run.js'
import { kindPaths, kindSchemas } from './openapi-rules.js'

const TAGS = [
  ...KINDS.map((k) => ({ name: k.title, description: `The ${k.name} rules, kept as files of the rules repository.` })),
  { name: 'Operations', description: 'The reconciler: its status and on-demand runs.' },
  { name: 'Alerts', description: 'Alerts from detection on the stored logs, and rule errors (docs/alerts.md).' },
  { name: 'Monitoring', description: 'Health, Prometheus metrics and this document; no authentication.' },
  { name: 'Webhooks', description: 'The push webhook of the rules repository (GitHub, Gitea, GitLab).' },
  { name: 'Log sources', description: 'HTTP log sources receiving audit logs (docs/audit-log.md).' },
  { name: 'Queries', description: 'Read-only SQL over the stored events (docs/queries.md).' },
  {
    name: 'Plans',
    description: 'What a change of the rules repository would do, before it is merged (docs/plans.md).',
  },
]

export function openApiDocument(basePath: string): Obj {
  const schemas: Record<string, unknown> = {
    ...ERROR_SCHEMAS,
    ...OPERATIONS_SCHEMAS,
    ...INVALID_FILE_SCHEMAS,
    ...ROOT_SCHEMAS,
    ...ALERT_SCHEMAS,
    ...RULE_ERROR_SCHEMAS,
    ...RULE_HEALTH_SCHEMAS,
    ...CORRELATION_RUN_SCHEMAS,
    ...QUERY_SCHEMAS,
    ...SCHEDULED_QUERY_RUN_SCHEMAS,
    ...PLAN_SCHEMAS,
    ...PREVIEW_SCHEMAS,
    ...HISTORY_SCHEMAS,
    ...CATALOG_SCHEMAS,
  }
  const paths: Record<string, unknown> = {}
  for (const { name: k } of KINDS) {
    Object.assign(schemas, kindSchemas(k))
    Object.assign(paths, kindPaths(k))
  }
  Object.assign(
    paths,
    alertPaths(),
    ruleErrorPaths(),
    ruleHealthPaths(),
    correlationRunPaths(),
    queryPaths(),
    scheduledQueryRunPaths(),
    planPaths(),
    previewPaths(),
  )
  Object.assign(paths, operationsPaths(), invalidFilePaths(), catalogPaths(), documentPath())
  const server = basePath === '/' ? '/' : basePath.replace(/\/$/, '')
  Object.assign(paths, rootPaths(server === '/' ? undefined : [{ url: '/', description: 'The root' }]))
  return {
    openapi: '3.0.3',
    info: {
      title: 'rulekeeper',
      version: '1.0',
      description:
        'Detection rules kept in Git behind a REST API. Rules are files of a Git repository; every write is a commit naming the token that made it.',
      contact: { name: 'rulekeeper maintainers' },
      // No licence is granted (package.json is private); the page says what that means.
      license: { name: 'No licence: all rights reserved', url: 'https://choosealicense.com/no-permission/' },
    },
    servers: [{ url: server, description: 'The API base path (`api.basePath`).' }],
    tags: TAGS,
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'An API token (`rulekeeper token create`).',
        },
        logSourceBearer: { type: 'http', scheme: 'bearer', description: "A log source's own token." },
        gitHubSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Hub-Signature-256',
          description: '`sha256=` and the hex HMAC-SHA256 of the body with the webhook secret.',
        },
        gitLabToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Gitlab-Token',
          description: 'The webhook secret itself.',
        },
      },
    },
    security: [{ apiKey: [] }],
    paths,
  }
}
