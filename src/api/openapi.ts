// The OpenAPI 3.0.3 document of every route the app serves, generated from the same JSON Schemas
// the server validates with (rules/schemas.ts) and the kinds' field tables, so the contract and
// the checks cannot disagree. Response schemas list as `required` what a response always carries;
// read-only fields keep their types (and `readOnly`) in the write schemas, where they are ignored.
import { ALERT_SCHEMAS, alertPaths } from './openapi-alerts.js'
import { CORRELATION_RUN_SCHEMAS, correlationRunPaths } from './openapi-correlation-run.js'
import { RULE_ERROR_SCHEMAS, ruleErrorPaths } from './openapi-rule-errors.js'
import { extraFieldsOf, fieldsOf, KINDS, kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { ID_PATTERN } from '../rules/rule-id.js'
import { readOnlyFieldsOf, responseSchema, writeSchema } from '../rules/schemas.js'
import { ERROR_EXAMPLES, RULE_EXAMPLES } from './openapi-examples.js'
import {
  ETAG_HEADER,
  HISTORY_SCHEMAS,
  historyPaths,
  IF_MATCH,
  IF_NONE_MATCH,
  PRECONDITION_FAILED,
} from './openapi-history.js'
import { MAX_CHANGE_REASON } from './rule-limits.js'
import { PERMISSIONS } from '../auth/token-store.js'

type Obj = Record<string, unknown>

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: Obj, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
})
const err = (description: string, example?: unknown) => ({ description, content: json(ref('Error'), example) })
const AUTH_ERRORS = {
  '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.', {
    message: 'missing X-API-Key header',
  }),
  '403': err('The token is valid but lacks the permission the method needs.', {
    message: 'this token lacks the Manage Rules permission',
  }),
}
const UNAVAILABLE = err(
  'It cannot be done right now (a mass deletion waits for a person, the Python test pool is busy or its sandbox cannot start); `Retry-After` says when to retry where that is known.',
)
const NOT_IMPLEMENTED = err(
  'Not available in this build or on the configured backend (e.g. a kind without a test engine).',
)

/** What the view of a rule of the kind always carries (mapping.ts `fileDataToView`, rule-views.ts). */
function alwaysPresent(kind: RuleKind): string[] {
  const def = kindDef(kind)
  const out: string[] = []
  // YAML-text fields are omitted when the file lacks them, unless a write requires them.
  for (const f of fieldsOf(kind)) if (!f.yamlText || f.requiredOnWrite) out.push(f.api)
  if (def.companion) out.push(def.companion.apiField)
  const metadata = new Set(['createdAt', 'createdBy', 'lastModified', 'lastModifiedBy', 'warnings'])
  for (const f of extraFieldsOf(kind)) if (metadata.has(f.api)) out.push(f.api)
  return out
}

let portableIdPattern_: string | undefined

/**
 * The id pattern without Unicode property escapes: the server's needs the `u` flag, which many
 * validators do not set (Spectral's ajv, most code generators), and without it `\p{Cc}` is read as
 * the letters `p{Cc}`. The same class spelt as `\uXXXX` ranges over the BMP means the same with or
 * without the flag; surrogates stay allowed (without the flag they are the halves of every astral
 * character), so only the server refuses the few astral format and private-use characters.
 */
function portableIdPattern(): string {
  if (portableIdPattern_ === undefined) {
    const allowed = new RegExp(ID_PATTERN, 'u')
    const hex = (n: number) => `\\u${n.toString(16).padStart(4, '0')}`
    const ranges: string[] = []
    let start = -1
    for (let c = 0; c <= 0x10000; c++) {
      const forbidden = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && !allowed.test(`a${String.fromCharCode(c)}a`)
      if (forbidden && start < 0) start = c
      if (!forbidden && start >= 0) {
        ranges.push(start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`)
        start = -1
      }
    }
    portableIdPattern_ = `^(?! )(?!.* $)[^${ranges.join('')}]+$`
  }
  return portableIdPattern_
}

function withPortableId(schema: { properties: Record<string, Obj> }): { properties: Record<string, Obj> } {
  const id = schema.properties.id
  return id ? { ...schema, properties: { ...schema.properties, id: { ...id, pattern: portableIdPattern() } } } : schema
}

function kindSchemas(kind: RuleKind): Record<string, Obj> {
  const def = kindDef(kind)
  const response = withPortableId(responseSchema(kind) as { properties: Record<string, Obj> })
  const write = withPortableId(writeSchema(kind) as { properties: Record<string, Obj> })
  // Read-only fields may be sent back (GET → edit → PUT) and are ignored, whatever their value.
  const readOnly = Object.fromEntries(
    [...readOnlyFieldsOf(kind)].map((f) => [
      f,
      { ...response.properties[f], readOnly: true, description: 'Read-only: ignored in writes.' },
    ]),
  )
  return {
    [def.title]: {
      ...response,
      description: `A ${kind} rule as the API returns it.`,
      required: alwaysPresent(kind),
    },
    [`${def.title}Write`]: {
      ...write,
      description: `A ${kind} rule as a client sends it. The read-only fields of a rule read back with GET may be sent along; they are ignored.`,
      properties: { ...write.properties, ...readOnly },
    },
    [`${def.title}Page`]: {
      type: 'object',
      description: `One page of ${kind} rules, in id order.`,
      required: ['results', 'next'],
      properties: {
        results: { type: 'array', items: ref(def.title) },
        next: { type: 'string', nullable: true, description: 'The `cursor` of the next page; null on the last page.' },
      },
    },
  }
}

function kindPaths(kind: RuleKind): Record<string, unknown> {
  const def = kindDef(kind)
  const name = def.title
  const noun = `${kind} rule`
  const q = (n: string, schema: Obj, description: string) => ({
    name: n,
    in: 'query',
    required: false,
    schema,
    description,
  })
  const bool = (d: boolean) => ({ type: 'boolean', default: d })
  const list = { type: 'array', items: { type: 'string' } }
  const includePython = def.pythonView
    ? [q('include-python', bool(false), 'Also return `pythonBody`, the rule as the Python it is evaluated as.')]
    : []
  const listParams = [
    q('cursor', { type: 'string' }, 'The `next` of the previous page.'),
    q('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, 'Page size.'),
    q('name-contains', { type: 'string' }, 'Case-insensitive substring of displayName (or id).'),
    q('state', { type: 'string', enum: ['enabled', 'disabled'] }, 'Only enabled or only disabled rules.'),
    q('severity', list, 'Any of these severities (comma-separated or repeated).'),
    q('tag', list, 'Has any of these tags (case-insensitive).'),
    q('created-by', { type: 'string' }, 'createdBy.id equals this.'),
    q('last-modified-by', { type: 'string' }, 'lastModifiedBy.id equals this.'),
    ...def.listFilters.map((f) =>
      q(f.param, list, `${f.description.charAt(0).toUpperCase()}${f.description.slice(1)}.`),
    ),
    ...includePython,
  ]
  const writeParams = [
    q('run-tests-first', bool(true), 'Run the unit tests before saving; a failing test saves nothing (400).'),
    q('run-tests-only', bool(false), 'Run the unit tests and save nothing (204 when every test passes).'),
    {
      name: 'X-Change-Reason',
      in: 'header',
      required: false,
      schema: { type: 'string', maxLength: MAX_CHANGE_REASON },
      description:
        'Becomes the body of the commit message. Its bytes are read as UTF-8 (so any script works, as curl sends it); bytes that are not valid UTF-8 are read as Latin-1. At most 2,000 characters.',
    },
  ]
  const common = { ...AUTH_ERRORS, '501': NOT_IMPLEMENTED, '503': UNAVAILABLE }
  const example = RULE_EXAMPLES[kind]
  const body = {
    required: true,
    description: `The ${noun}. Read-only fields are ignored.`,
    content: json(ref(`${name}Write`), example?.write),
  }
  const ok = (d: string) => ({ description: d, headers: ETAG_HEADER, content: json(ref(name), example?.read) })
  const invalid = err(
    'The body is invalid (every problem, each with a JSON pointer and, inside a YAML-text field, line and column), or a unit test failed (`testResults`); nothing was saved.',
    ERROR_EXAMPLES.invalid,
  )
  const tooLarge = err('The body, a field or the rule file is larger than the configured limit.')
  const notJson = err('The body is not `application/json`.')
  const idParam = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'The rule id (`RuleID`).',
  }
  const tag = [name]
  return {
    [`/${def.apiPath}`]: {
      get: {
        tags: tag,
        summary: `List ${noun}s`,
        description: `Pages through the ${noun}s of the served revision in id order, filtered. Needs View Rules. A walk with \`cursor\` never repeats an id and never skips one that stayed unchanged.`,
        operationId: `list${name}s`,
        parameters: listParams,
        responses: {
          '200': {
            description: 'A page of rules.',
            content: json(ref(`${name}Page`), example ? { results: [example.read], next: null } : undefined),
          },
          '400': err('An unknown or malformed query parameter.'),
          ...common,
        },
      },
      post: {
        tags: tag,
        summary: `Create a ${noun}`,
        description: `Validates the ${noun}, runs its unit tests (unless \`run-tests-first=false\`) and commits it as a new file. Needs Manage Rules. Answers **200** with the saved rule, as every successful POST of this API does (a POST names no resource of its own, so it does not answer 201 with a Location); compare PUT, which answers 201 when it creates.`,
        operationId: `create${name}`,
        parameters: writeParams,
        requestBody: body,
        responses: {
          '200': ok('The saved rule.'),
          '204': { description: '`run-tests-only=true`: every test passed; nothing was saved.' },
          '400': invalid,
          '409': err('A rule with this id (ignoring case) exists.'),
          '413': tooLarge,
          '415': notJson,
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}`]: {
      parameters: [idParam],
      get: {
        tags: tag,
        summary: `Get a ${noun}`,
        description: `The ${noun} with this id in the served revision, with its history metadata and warnings. Needs View Rules.`,
        operationId: `get${name}`,
        parameters: includePython,
        responses: { '200': ok('The rule.'), '404': err('No rule of this kind has this id.'), ...common },
      },
      put: {
        tags: tag,
        summary: `Create or replace a ${noun}`,
        description: `Replaces the ${noun} with this id, or creates it: **200** when it existed (replaced, or unchanged when the body says what the file says), **201** when this request created it. The body's id, when given, must equal the path's. A rule read with GET may be sent back as it is, edited: read-only fields are ignored. Unit tests run first unless \`run-tests-first=false\`. Needs Manage Rules.`,
        operationId: `replace${name}`,
        parameters: [...writeParams, IF_MATCH, IF_NONE_MATCH],
        requestBody: body,
        responses: {
          '200': ok('The rule existed and was replaced (or was unchanged).'),
          '201': ok('The rule did not exist and was created.'),
          '204': { description: '`run-tests-only=true`: every test passed; nothing was saved.' },
          '400': invalid,
          '409': err('The id belongs to a rule of another kind.'),
          '412': PRECONDITION_FAILED,
          '413': tooLarge,
          '415': notJson,
          ...common,
        },
      },
      delete: {
        tags: tag,
        summary: `Delete a ${noun}`,
        description: `Removes the ${noun}'s files in one commit. Needs Manage Rules.`,
        operationId: `delete${name}`,
        parameters: [writeParams[2], IF_MATCH],
        responses: {
          '204': { description: 'Deleted.' },
          '400': err('An unknown query parameter, or a change reason that is too long.'),
          '404': err('No rule of this kind has this id.'),
          '412': PRECONDITION_FAILED,
          ...common,
        },
      },
    },
    ...historyPaths(kind, common, writeParams[2]!, example?.read),
  }
}

/** Status, health and the shapes the operational routes answer with. */
const OPS_SCHEMAS: Record<string, Obj> = {
  Error: {
    type: 'object',
    description: 'Every error answer. 5xx answers carry only `message` and `requestId` (the log has the rest).',
    required: ['message'],
    properties: {
      message: { type: 'string' },
      errors: { type: 'array', items: ref('FieldProblem'), description: 'Every validation problem found.' },
      testResults: { type: 'array', items: ref('TestResult'), description: 'The unit tests run, when one failed.' },
      requestId: { type: 'string', description: 'On 5xx answers: the request id the logs carry.' },
      limit: { type: 'integer', description: 'On 413 answers of the log sources: the limit exceeded.' },
    },
  },
  FieldProblem: {
    type: 'object',
    required: ['path', 'message'],
    properties: {
      path: { type: 'string', description: 'JSON pointer into the request body.' },
      message: { type: 'string' },
      line: { type: 'integer', description: 'Inside a YAML-text field: the line (1-based).' },
      column: { type: 'integer', description: 'Inside a YAML-text field: the column (1-based).' },
    },
  },
  TestResult: {
    type: 'object',
    description: 'One unit test. A test that could not run is never a pass.',
    required: ['name', 'passed', 'error'],
    properties: {
      name: { type: 'string' },
      passed: { type: 'boolean' },
      error: { type: 'string', nullable: true, description: 'Why it did not pass.' },
      errored: { type: 'boolean', description: 'Scheduled and simple rules: whether any function raised.' },
      functions: {
        type: 'object',
        description:
          'Scheduled and simple rules: per function (`detection`, `title`, `dedup`, `alertContext`, `severity`, `description`, `reference`, `runbook`, `destinations`) its output and error.',
        additionalProperties: ref('FunctionOutcome'),
      },
    },
  },
  FunctionOutcome: {
    type: 'object',
    required: ['output', 'error'],
    properties: {
      output: { description: 'What the function returned (any JSON value; null when it raised).' },
      error: { type: 'string', nullable: true },
    },
  },
  Condition: {
    type: 'object',
    required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
    properties: {
      type: { type: 'string', enum: ['Ready', 'Reconciling', 'Stalled'] },
      status: { type: 'string', enum: ['True', 'False'] },
      reason: { type: 'string' },
      message: { type: 'string' },
      lastTransitionTime: { type: 'string', format: 'date-time' },
    },
  },
  Status: {
    type: 'object',
    description: 'The reconciler: conditions in the style of Kubernetes, the revisions, the invalid files.',
    required: [
      'conditions',
      'lastAppliedRevision',
      'lastAttemptedRevision',
      'lastRun',
      'invalidFiles',
      'staleRules',
      'remote',
    ],
    properties: {
      conditions: { type: 'array', items: ref('Condition') },
      lastAppliedRevision: { type: 'string', nullable: true, description: 'The commit served.' },
      lastAttemptedRevision: { type: 'string', nullable: true },
      lastRun: {
        type: 'object',
        nullable: true,
        required: ['startedAt', 'durationMs', 'filesChanged', 'outcome'],
        properties: {
          startedAt: { type: 'string', format: 'date-time' },
          durationMs: { type: 'integer' },
          filesChanged: { type: 'integer' },
          outcome: { type: 'string' },
        },
      },
      invalidFiles: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'ruleId', 'errors'],
          properties: {
            path: { type: 'string' },
            ruleId: { type: 'string', nullable: true },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                required: ['message', 'line', 'column'],
                properties: {
                  message: { type: 'string' },
                  line: { type: 'integer', nullable: true },
                  column: { type: 'integer', nullable: true },
                  file: {
                    type: 'string',
                    description: 'The file line and column are in, when not `path` (its .py, a helper).',
                  },
                },
              },
            },
          },
        },
      },
      notRunFiles: {
        type: 'array',
        description:
          'Valid files whose Python imports a module the interpreter lacks (not-run), or could not be checked (unchecked: no sandbox).',
        items: {
          type: 'object',
          required: ['path', 'ruleId', 'status', 'problem'],
          properties: {
            path: { type: 'string' },
            ruleId: { type: 'string', nullable: true },
            status: { type: 'string', enum: ['not-run', 'unchecked'] },
            problem: {
              type: 'object',
              required: ['message', 'line', 'column'],
              properties: {
                message: { type: 'string' },
                line: { type: 'integer', nullable: true },
                column: { type: 'integer', nullable: true },
                file: { type: 'string' },
              },
            },
          },
        },
      },
      staleRules: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'path'],
          properties: { id: { type: 'string' }, path: { type: 'string' } },
        },
      },
      remote: {
        type: 'object',
        nullable: true,
        description: 'null in embedded mode (no remote).',
        required: ['url', 'branch', 'reachable'],
        properties: {
          url: { type: 'string', description: 'Without credentials.' },
          branch: { type: 'string' },
          reachable: { type: 'boolean' },
          error: { type: 'string' },
        },
      },
      detection: {
        type: 'object',
        description: 'Detection on the stored log (alerts.md §1) and the correlation schedule (§5). GET /status only.',
        required: ['checkpoint', 'lagSeconds', 'failed', 'correlation'],
        properties: {
          checkpoint: {
            type: 'object',
            required: ['records', 'evaluatedAt', 'lastKey'],
            properties: {
              records: { type: 'integer', description: 'Records evaluated since the data directory was made.' },
              evaluatedAt: { type: 'string', format: 'date-time', nullable: true },
              lastKey: {
                type: 'string',
                nullable: true,
                description: 'The last record evaluated (its place in the stored order).',
              },
            },
          },
          lagSeconds: {
            type: 'number',
            description: 'How long the oldest record not yet evaluated has waited; 0 when caught up.',
          },
          failed: {
            type: 'boolean',
            description: 'Detection stopped on an error; it resumes from its checkpoint at the next start.',
          },
          correlation: {
            type: 'object',
            required: ['rules'],
            properties: {
              rules: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['ruleId', 'schedule', 'lastRun', 'nextRunAt', 'lastError', 'runs', 'errors'],
                  properties: {
                    ruleId: { type: 'string' },
                    schedule: {
                      type: 'object',
                      properties: { rateMinutes: { type: 'integer' }, cronExpression: { type: 'string' } },
                    },
                    lastRun: {
                      type: 'object',
                      nullable: true,
                      required: ['evaluatedAt', 'durationMs', 'outcome', 'matches', 'signalsCounted', 'alertsCreated'],
                      properties: {
                        evaluatedAt: { type: 'string', format: 'date-time' },
                        durationMs: { type: 'integer' },
                        outcome: { type: 'string', enum: ['ok', 'error', 'skipped'] },
                        matches: { type: 'integer' },
                        signalsCounted: { type: 'integer' },
                        alertsCreated: { type: 'integer' },
                      },
                    },
                    nextRunAt: { type: 'string', format: 'date-time', nullable: true },
                    lastError: {
                      type: 'object',
                      nullable: true,
                      required: ['time', 'error'],
                      properties: { time: { type: 'string', format: 'date-time' }, error: { type: 'string' } },
                    },
                    runs: { type: 'integer' },
                    errors: { type: 'integer' },
                  },
                },
              },
            },
          },
        },
      },
      delivery: {
        type: 'object',
        description: 'Dead letters: deliveries that failed for good (alerts.md §4). GET /status only.',
        required: ['failed'],
        properties: {
          failed: {
            type: 'array',
            items: {
              type: 'object',
              required: ['alertId', 'destinationId', 'attempts', 'lastError'],
              properties: {
                alertId: { type: 'string' },
                destinationId: { type: 'string' },
                attempts: { type: 'integer' },
                lastError: { type: 'string', nullable: true },
              },
            },
          },
        },
      },
      destinations: {
        type: 'object',
        description: 'The configured destinations, and OutputIds naming none of them (a warning). GET /status only.',
        required: ['configured', 'unknown'],
        properties: {
          configured: { type: 'integer' },
          unknown: {
            type: 'array',
            items: {
              type: 'object',
              required: ['ruleId', 'outputId'],
              properties: { ruleId: { type: 'string' }, outputId: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  Message: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
  Identity: {
    type: 'object',
    description: 'The calling token (never its secret).',
    required: ['id', 'name', 'permissions', 'createdAt', 'expiresAt'],
    properties: {
      id: { type: 'string', example: 'tok_AbCdEfGhIjKl' },
      name: { type: 'string', example: 'ci' },
      permissions: {
        type: 'array',
        items: { type: 'string', enum: [...PERMISSIONS] },
      },
      createdAt: { type: 'string', format: 'date-time' },
      expiresAt: { type: 'string', format: 'date-time', nullable: true },
    },
  },
  DeliveryResult: {
    type: 'object',
    required: ['accepted', 'rejected', 'duplicates', 'unknownKind', 'errors'],
    properties: {
      accepted: { type: 'integer' },
      rejected: { type: 'integer' },
      duplicates: { type: 'integer' },
      unknownKind: { type: 'integer' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'message'],
          properties: { index: { type: 'integer' }, line: { type: 'integer' }, message: { type: 'string' } },
        },
      },
    },
  },
}

const TAGS = [
  ...KINDS.map((k) => ({ name: k.title, description: `The ${k.name} rules, kept as files of the rules repository.` })),
  { name: 'Operations', description: 'The reconciler: its status and on-demand runs.' },
  { name: 'Alerts', description: 'Alerts from detection on the stored logs, and rule errors (docs/alerts.md).' },
  { name: 'Monitoring', description: 'Health, Prometheus metrics and this document; no authentication.' },
  { name: 'Webhooks', description: 'The push webhook of the rules repository (GitHub, Gitea, GitLab).' },
  { name: 'Log sources', description: 'HTTP log sources receiving audit logs (docs/audit-log.md).' },
]

const OPEN: never[] = []

/** Operations at the root whatever the base path (a server of their own when there is one). */
function rootPaths(rootServer: Obj[] | undefined): Record<string, Obj> {
  const at = (item: Obj) => (rootServer ? { servers: rootServer, ...item } : item)
  return {
    '/healthz': at({
      get: {
        tags: ['Monitoring'],
        summary: 'Health check',
        description: 'Answers 200 while the server serves. No authentication.',
        operationId: 'getHealth',
        security: OPEN,
        responses: {
          '200': {
            description: 'Serving.',
            content: json(
              { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } },
              { status: 'ok' },
            ),
          },
        },
      },
    }),
    '/metrics': at({
      get: {
        tags: ['Monitoring'],
        summary: 'Prometheus metrics',
        description:
          'The metrics in the Prometheus text format (docs/operations.md says what each means). No authentication.',
        operationId: 'getMetrics',
        security: OPEN,
        responses: {
          '200': {
            description: 'The metrics.',
            content: {
              'text/plain': {
                schema: { type: 'string' },
                example:
                  '# HELP rulekeeper_rules Rules served, by kind\n# TYPE rulekeeper_rules gauge\nrulekeeper_rules{kind="simple"} 42\n',
              },
            },
          },
        },
      },
    }),
    '/hooks/git': at({
      post: {
        tags: ['Webhooks'],
        summary: 'Push webhook',
        description:
          'Schedules a reconcile (a fetch of the remote) on a push. Authenticated by a GitHub/Gitea `X-Hub-Signature-256` HMAC of the body or a GitLab `X-Gitlab-Token`, with the secret `RULEKEEPER_GIT_WEBHOOK_SECRET`; an API token is no signature. A delivery already received within 24 hours is acknowledged with 200 and runs nothing.',
        operationId: 'receiveGitPush',
        security: [{ gitHubSignature: [] }, { gitLabToken: [] }],
        requestBody: {
          required: true,
          description: "The forge's push event (only its signature is checked).",
          content: json({ type: 'object' }),
        },
        responses: {
          '200': { description: 'A redelivery: acknowledged, nothing scheduled.', content: json(ref('Message')) },
          '202': {
            description: 'A reconcile is scheduled.',
            content: json(ref('Message'), { message: 'reconcile scheduled' }),
          },
          '401': err('The signature or token is missing or wrong.'),
          '404': err('No webhook secret is configured.'),
          '413': err('The body is larger than 1 MiB.'),
        },
      },
    }),
    '/http/{sourceId}': at({
      post: {
        tags: ['Log sources'],
        summary: 'Send log records',
        description:
          "Stores the records of one delivery durably, partitioned by event date; answers once every accepted line is on disk. The body is one JSON object, an array of objects, or newline-delimited objects, optionally gzip-compressed (told apart from the bytes, whatever the Content-Type). Authenticated by the source's own bearer token (API tokens do not open log sources), checked before the body is read.",
        operationId: 'sendLogRecords',
        security: [{ logSourceBearer: [] }],
        parameters: [
          {
            name: 'sourceId',
            in: 'path',
            required: true,
            schema: { type: 'string' },
            description: 'The log source id (`logSources[].id` in the configuration, e.g. `editor-audit`).',
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] },
            },
            'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line.' } },
          },
        },
        responses: {
          '200': {
            description: 'Every readable record is accepted, rejected (kept apart, with why) or a duplicate.',
            content: json(ref('DeliveryResult'), {
              accepted: 2,
              rejected: 0,
              duplicates: 0,
              unknownKind: 0,
              errors: [],
            }),
          },
          '400': err('The body is empty or holds no readable record; nothing was stored.'),
          '401': err("The source's bearer token is missing or wrong."),
          '404': err('No log source has this id.'),
          '413': err('Compressed or decompressed body, or record count, over the limit.'),
          '415': err('A compression other than gzip.'),
          '503': UNAVAILABLE,
        },
      },
    }),
  }
}

export function openApiDocument(basePath: string): Obj {
  const schemas: Record<string, unknown> = {
    ...OPS_SCHEMAS,
    ...ALERT_SCHEMAS,
    ...RULE_ERROR_SCHEMAS,
    ...CORRELATION_RUN_SCHEMAS,
    ...HISTORY_SCHEMAS,
  }
  const paths: Record<string, unknown> = {}
  for (const { name: k } of KINDS) {
    Object.assign(schemas, kindSchemas(k))
    Object.assign(paths, kindPaths(k))
  }
  Object.assign(paths, alertPaths(), ruleErrorPaths(), correlationRunPaths())
  paths['/status'] = {
    get: {
      tags: ['Operations'],
      summary: 'Reconcile status',
      description:
        'The conditions of the reconciler, the applied and attempted revisions and the invalid files. Needs View Rules.',
      operationId: 'getStatus',
      responses: { '200': { description: 'The status.', content: json(ref('Status')) }, ...AUTH_ERRORS },
    },
  }
  paths['/reconcile'] = {
    post: {
      tags: ['Operations'],
      summary: 'Reconcile now',
      description:
        'Runs a reconcile now (or once more after the current run) and answers with the status after it. `allow-mass-delete=true` lets a held-back revision that deletes many rules through. Needs Manage Rules.',
      operationId: 'reconcile',
      parameters: [
        {
          name: 'allow-mass-delete',
          in: 'query',
          required: false,
          schema: { type: 'boolean', default: false },
          description: 'Apply the revision the mass-deletion guard holds back.',
        },
      ],
      responses: {
        '200': { description: 'The status after the run.', content: json(ref('Status')) },
        '400': err('An unknown query parameter.'),
        ...AUTH_ERRORS,
      },
    },
  }
  paths['/whoami'] = {
    get: {
      tags: ['Operations'],
      summary: 'The calling token',
      description:
        'The id, name, permissions, creation and expiry of the token in `X-API-Key`, so a client (the console) knows what it may do without trying. Any known token may ask, whatever its permissions.',
      operationId: 'whoami',
      responses: {
        '200': {
          description: 'The token.',
          content: json(ref('Identity'), {
            id: 'tok_AbCdEfGhIjKl',
            name: 'ci',
            permissions: ['View Rules', 'Manage Rules'],
            createdAt: '2026-11-20T09:00:00.000Z',
            expiresAt: null,
          }),
        },
        '400': err('An unknown query parameter.'),
        '401': AUTH_ERRORS['401'],
      },
    },
  }
  paths['/openapi.json'] = {
    get: {
      tags: ['Monitoring'],
      summary: 'This document',
      description: 'The OpenAPI document of this server. No authentication.',
      operationId: 'getOpenApiDocument',
      security: OPEN,
      responses: {
        '200': { description: 'The OpenAPI 3.0.3 document.', content: json({ type: 'object' }) },
      },
    },
  }
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
