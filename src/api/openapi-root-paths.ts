// The OpenAPI part of the routes outside the rules (tags Monitoring, Webhooks, Log sources): the
// health check, the metrics and this document itself, the push webhook, and the HTTP log sources
// with the shape of a delivery's result. The root ones keep their own server when there is a base
// path.
import { err, json, type Obj, ref, UNAVAILABLE } from './openapi-common.js'

export const ROOT_SCHEMAS: Record<string, Obj> = {
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

const OPEN: never[] = []

/** `/openapi.json`, under the base path. */
export function documentPath(): Obj {
  const paths: Obj = {}
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
  return paths
}

/** Operations at the root whatever the base path (a server of their own when there is one). */
export function rootPaths(rootServer: Obj[] | undefined): Record<string, Obj> {
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
