// The OpenAPI part of the operational routes under the base path (tag Operations): the reconciler's
// status and on-demand runs (`/status`, `/reconcile`) and the calling token (`/whoami`), with the
// shapes they answer with.
import { PERMISSIONS } from '../auth/token-store.js'
import { AUTH_ERRORS, err, json, type Obj, ref } from './openapi-common.js'
import { FILE_PROBLEM } from './openapi-invalid-files.js'

const USED_LIMIT = {
  type: 'object',
  required: ['used', 'limit'],
  properties: { used: { type: 'integer' }, limit: { type: 'integer' } },
}

export const OPERATIONS_SCHEMAS: Record<string, Obj> = {
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
      'invalidFileCount',
      'invalidFilesNext',
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
        maxItems: 100,
        description:
          'The first 100 invalid files, by path (byte order); `invalidFileCount` counts them all and `GET /status/invalid-files` pages through them.',
        items: ref('InvalidFile'),
      },
      invalidFileCount: { type: 'integer', minimum: 0, description: 'How many files of the revision are invalid.' },
      invalidFilesNext: {
        type: 'string',
        nullable: true,
        description:
          'When `invalidFiles` is not the whole list: the `cursor` of `GET /status/invalid-files` for the files after it; null otherwise.',
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
            problem: FILE_PROBLEM,
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
      quota: {
        type: 'object',
        description:
          'The served revision against the repository limits: bytes of the rule files (YAML and the .py each names) and rules served. A pushed revision over a limit is served and listed in `over`; an API write past one is a 409 QuotaExceeded.',
        required: ['repositoryBytes', 'rules', 'over'],
        properties: {
          repositoryBytes: USED_LIMIT,
          rules: USED_LIMIT,
          over: {
            type: 'array',
            items: {
              type: 'object',
              required: ['limit', 'used', 'max', 'over', 'message'],
              properties: {
                limit: { type: 'string', enum: ['rules.maxRepositoryBytes', 'rules.maxRules'] },
                used: { type: 'integer' },
                max: { type: 'integer' },
                over: { type: 'integer', description: 'How far over the limit.' },
                message: { type: 'string' },
              },
            },
          },
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
          lateRules: {
            type: 'array',
            description:
              "Python rules whose answers come later than the other rules' (evicted to a worker of their own for holding theirs past their share of a batch): the records they still owe held in memory, and since when. Owed at the last start with no record in memory: records 0.",
            items: {
              type: 'object',
              required: ['ruleId', 'records', 'since'],
              properties: {
                ruleId: { type: 'string' },
                records: { type: 'integer' },
                since: { type: 'string', format: 'date-time' },
              },
            },
          },
          quarantined: {
            type: 'array',
            description:
              'Python rules not evaluated until their next revision: stopped in detection.python.quarantineAfter batches in a row.',
            items: {
              type: 'object',
              required: ['ruleId', 'since', 'reason'],
              properties: {
                ruleId: { type: 'string' },
                since: { type: 'string', format: 'date-time' },
                reason: { type: 'string' },
              },
            },
          },
          alertLimit: {
            type: 'object',
            description:
              'The alert limit (config detection.alertsPerRuleHour): the rules that made that many alerts in the current clock hour; their further matches are stored as signals only until the hour ends.',
            required: ['perHour', 'hourStart', 'rules'],
            properties: {
              perHour: { type: 'integer' },
              hourStart: { type: 'string', format: 'date-time' },
              rules: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['ruleId', 'alerts', 'limitedMatches'],
                  properties: {
                    ruleId: { type: 'string' },
                    alerts: { type: 'integer' },
                    limitedMatches: { type: 'integer', description: 'Matches stored as signals only this hour.' },
                  },
                },
              },
            },
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
      scheduledQueries: ref('ScheduledQueriesStatus'),
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
}

export function operationsPaths(): Obj {
  const paths: Obj = {}
  paths['/status'] = {
    get: {
      tags: ['Operations'],
      summary: 'Reconcile status',
      description:
        'The conditions of the reconciler, the applied and attempted revisions and the invalid files (the first 100, their count and the cursor of the rest: `GET /status/invalid-files`). Needs View Rules.',
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
  return paths
}
