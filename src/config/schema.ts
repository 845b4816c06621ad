// The configuration's shape: one JSON Schema (validated with ajv, every problem listed) and the
// TypeScript type it guarantees. Sections owned by other modules (the log sources) plug their own
// schema in here so that the whole file is still checked in one pass.
import type { JSONSchemaType } from 'ajv'

export interface Config {
  server: { host: string; port: number }
  dataDir: string
  api: { basePath: string; maxBodyBytes: number; tokenReloadMs: number }
  /**
   * Per-rule limits: bytes of a rule file (and of any one write-body field), tests per rule; the
   * repository's: bytes of every rule file together, rules served.
   */
  rules: { maxFileBytes: number; maxTests: number; maxRepositoryBytes: number; maxRules: number }
  backend: { kind: 'snowflake' | 'databricks' }
  git: {
    branch: string
    committer: { name: string; email: string }
    remote: { url: string | null; timeoutMs: number }
    /** The service signs its commits with this OpenSSH private key (SSH signatures, as git makes them). */
    signing?: { sshKeyFile: string } | null
    /** Only revisions whose tip commit is signed by a key of this allowed-signers file are served. */
    verify?: { allowedSignersFile: string } | null
  }
  reconcile: { schedule: string; massDeleteShare: number; massDeleteMin: number }
  python: {
    command: string
    poolSize: number
    timeoutMs: number
    /** Rules waiting for a Python run, all callers together / per caller (then 503 + Retry-After). */
    queueLimit?: number
    queuePerCaller?: number
    /** Wall clock for all Python tests of one API request. */
    requestBudgetMs?: number
    /** Each run's tmpfs scratch directory. */
    scratchBytes?: number
    /** Root only: the first of the uids given to concurrent runs. */
    uidBase?: number
  }
  log: { level: string }
  /** Sections owned by other modules (log sources, …); each checks its own. */
  [section: string]: unknown
}

export const configSchema = {
  type: 'object',
  required: ['server', 'dataDir', 'api', 'rules', 'backend', 'git', 'reconcile', 'python', 'log'],
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      required: ['host', 'port'],
      properties: {
        host: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 0, maximum: 65535 },
      },
    },
    dataDir: { type: 'string', minLength: 1 },
    api: {
      type: 'object',
      additionalProperties: false,
      required: ['basePath', 'maxBodyBytes', 'tokenReloadMs'],
      properties: {
        basePath: { type: 'string', pattern: '^/([A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*)?/?$' },
        maxBodyBytes: { type: 'integer', minimum: 1024 },
        tokenReloadMs: { type: 'integer', minimum: 10, maximum: 1000 },
      },
    },
    rules: {
      type: 'object',
      additionalProperties: false,
      required: ['maxFileBytes', 'maxTests', 'maxRepositoryBytes', 'maxRules'],
      properties: {
        maxFileBytes: { type: 'integer', minimum: 1024 },
        maxTests: { type: 'integer', minimum: 0 },
        maxRepositoryBytes: { type: 'integer', minimum: 1024 },
        maxRules: { type: 'integer', minimum: 1 },
      },
    },
    backend: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { type: 'string', enum: ['snowflake', 'databricks'] } },
    },
    git: {
      type: 'object',
      additionalProperties: false,
      required: ['branch', 'committer', 'remote'],
      properties: {
        branch: { type: 'string', pattern: '^[A-Za-z0-9._/-]+$' },
        committer: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'email'],
          properties: { name: { type: 'string', minLength: 1 }, email: { type: 'string', minLength: 1 } },
        },
        remote: {
          type: 'object',
          additionalProperties: false,
          required: ['url', 'timeoutMs'],
          properties: { url: { type: ['string', 'null'] }, timeoutMs: { type: 'integer', minimum: 100 } },
        },
        signing: {
          type: ['object', 'null'],
          additionalProperties: false,
          required: ['sshKeyFile'],
          properties: { sshKeyFile: { type: 'string', minLength: 1 } },
        },
        verify: {
          type: ['object', 'null'],
          additionalProperties: false,
          required: ['allowedSignersFile'],
          properties: { allowedSignersFile: { type: 'string', minLength: 1 } },
        },
      },
    },
    reconcile: {
      type: 'object',
      additionalProperties: false,
      required: ['schedule', 'massDeleteShare', 'massDeleteMin'],
      properties: {
        schedule: { type: 'string', minLength: 1 },
        massDeleteShare: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        massDeleteMin: { type: 'integer', minimum: 0 },
      },
    },
    python: {
      type: 'object',
      additionalProperties: false,
      required: ['command', 'poolSize', 'timeoutMs'],
      properties: {
        command: { type: 'string', minLength: 1 },
        poolSize: { type: 'integer', minimum: 1, maximum: 64 },
        timeoutMs: { type: 'integer', minimum: 100 },
        queueLimit: { type: 'integer', minimum: 1, maximum: 100000 },
        queuePerCaller: { type: 'integer', minimum: 1, maximum: 100000 },
        requestBudgetMs: { type: 'integer', minimum: 1000 },
        scratchBytes: { type: 'integer', minimum: 65536 },
        uidBase: { type: 'integer', minimum: 1000, maximum: 4294000000 },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      required: ['level'],
      properties: { level: { type: 'string', enum: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] } },
    },
  },
} as const satisfies Partial<JSONSchemaType<unknown>> | object
