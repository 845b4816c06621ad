// The OpenAPI part of a kind's history routes (history, a revision, diff, restore) and of optimistic
// concurrency (the ETag header, If-Match / If-None-Match, 412), merged into the kind's paths by
// openapi.ts. Shapes as api.md, "History, restore and optimistic concurrency", gives them.
import { kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { err, json, type Obj, ref } from './openapi-common.js'

const REV = '3f1c0a9e5b7d2c4e6f8a1b3c5d7e9f0a2b4c6d8e'

export const ETAG_HEADER = {
  ETag: {
    description:
      'Strong entity tag: the blob ids of the rule’s files (its YAML, then its `.py` companion), quoted. It changes exactly when the rule’s files change. Send it back in `If-Match`.',
    schema: { type: 'string' },
  },
}

export const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'Write only if the rule’s current ETag is one of these (`*`: only if it exists). Judged inside the writer against the revision the write commits on; a stale value is a 412 and nothing is written.',
}

export const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  schema: { type: 'string', enum: ['*'] },
  description: '`*`: create only; a 412 if the rule exists.',
}

export const PRECONDITION_FAILED = err('`If-Match` or `If-None-Match` did not hold; nothing was written.', {
  message:
    'If-Match failed: simple rule AWS.Root.Login was changed meanwhile (its ETag is now "…", you sent "…"); nothing was written — read it again and reapply your change',
  code: 'PreconditionFailed',
})

export const HISTORY_SCHEMAS: Record<string, Obj> = {
  HistoryEntry: {
    type: 'object',
    description: 'One commit that changed the rule’s files.',
    required: ['revision', 'parent', 'time', 'actor', 'authorName', 'reason', 'change', 'paths'],
    properties: {
      revision: { type: 'string', description: 'The commit id.' },
      parent: { type: 'string', nullable: true, description: 'Its first parent (null for a root commit).' },
      time: { type: 'string', format: 'date-time', description: 'The commit’s author time (RFC 3339 UTC).' },
      actor: {
        type: 'object',
        required: ['id', 'type'],
        properties: { id: { type: 'string' }, type: { type: 'string', enum: ['user', 'api-token', 'system'] } },
        description:
          'On commits the service made (recorded, or signed with its key), from their Actor-Id / Actor-Type trailers; on any other commit, the author’s email (type `user`), whatever its trailers say; on a merge commit, the author of the commits it merged (the one with the most of them).',
      },
      authorName: {
        type: 'string',
        description: 'The commit author’s name (of a merge commit: the credited author’s).',
      },
      mergedBy: {
        type: 'object',
        required: ['id', 'type'],
        properties: { id: { type: 'string' }, type: { type: 'string', enum: ['user'] } },
        description: 'Merge commits only: who merged (the merge commit’s author).',
      },
      authors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'type'],
          properties: { id: { type: 'string' }, type: { type: 'string', enum: ['user'] } },
        },
        description: 'Merge commits only: every author of the merged commits, the credited one first.',
      },
      reason: {
        type: 'string',
        nullable: true,
        description:
          'The `X-Change-Reason` of an API write (the message body); for a plain-git commit its message without trailers; for a GitHub merge commit (“Merge pull request #N from …”), the pull request’s title and number: `<title> (#N)`.',
      },
      change: { type: 'string', enum: ['created', 'updated', 'deleted', 'moved'] },
      paths: { type: 'array', items: { type: 'string' }, description: 'The rule’s files the commit changed.' },
    },
  },
  HistoryPage: {
    type: 'object',
    required: ['results', 'next'],
    properties: {
      results: { type: 'array', items: ref('HistoryEntry') },
      next: { type: 'string', nullable: true, description: 'The `cursor` of the next (older) page.' },
    },
  },
  RuleDiff: {
    type: 'object',
    required: ['from', 'to', 'files'],
    properties: {
      from: { type: 'string' },
      to: { type: 'string' },
      files: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'unifiedDiff'],
          properties: { path: { type: 'string' }, unifiedDiff: { type: 'string' } },
        },
      },
    },
  },
}

/** The history paths of one kind. `common` are the error answers every rule route has. */
export function historyPaths(kind: RuleKind, common: Obj, changeReason: Obj, readExample?: unknown): Obj {
  const def = kindDef(kind)
  const name = def.title
  const noun = `${kind} rule`
  const tags = [name]
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'The rule id (`RuleID`).',
  }
  const revisionParam = (where: 'path' | 'query', description: string) => ({
    name: 'revision',
    in: where,
    required: true,
    schema: { type: 'string', pattern: '^[0-9a-fA-F]{4,40}$' },
    description,
  })
  const q = (n: string, required: boolean, description: string) => ({
    name: n,
    in: 'query',
    required,
    schema: { type: 'string' },
    description,
  })
  const atRevision = {
    allOf: [
      ref(name),
      {
        type: 'object',
        required: ['revision'],
        properties: { revision: { type: 'string', description: 'The commit the rule is shown at.' } },
      },
    ],
  }
  const noHistory = err('No rule of this kind has ever had this id (or it is now a rule of another kind).')
  return {
    [`/${def.apiPath}/{id}/history`]: {
      parameters: [id],
      get: {
        tags,
        summary: `History of a ${noun}`,
        description: `Every commit that changed the ${noun}’s files, newest first: all its lives (a deleted and re-created id shows both), moves followed, plain-git commits and merged pull requests included. Readable after the rule is deleted. Needs View Rules.`,
        operationId: `history${name}`,
        parameters: [
          q('cursor', false, 'The `next` of the previous page.'),
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            description: 'Page size.',
          },
        ],
        responses: {
          '200': {
            description: 'A page of the history.',
            content: json(ref('HistoryPage'), {
              results: [
                {
                  revision: REV,
                  parent: '9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b',
                  time: '2026-11-21T12:00:00.000Z',
                  actor: { id: 'tok_7Hc2', type: 'api-token' },
                  authorName: 'ci',
                  reason: 'too noisy, see SEC-42',
                  change: 'updated',
                  paths: ['simple_rules/aws/AWS.Root.Login.yml'],
                },
              ],
              next: null,
            }),
          },
          '400': err('An unknown query parameter, a bad limit or cursor.'),
          '404': noHistory,
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}/history/{revision}`]: {
      parameters: [id, revisionParam('path', 'A commit id (full, or an abbreviation of one of the rule’s commits).')],
      get: {
        tags,
        summary: `A ${noun} as it was at a revision`,
        description: `The ${noun} as it was at that commit, in the resource shape (with its history metadata as of then) plus \`revision\`. Needs View Rules.`,
        operationId: `get${name}AtRevision`,
        responses: {
          '200': {
            description: 'The rule at that revision.',
            content: json(atRevision, readExample ? { ...(readExample as Obj), revision: REV } : undefined),
          },
          '400': err('The revision is not a commit id.'),
          '404': err('The rule did not exist (or was not a valid rule) at that revision, or there is no such commit.'),
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}/diff`]: {
      parameters: [id],
      get: {
        tags,
        summary: `Compare two versions of a ${noun}`,
        description: `A unified diff of each of the ${noun}’s files that differ between two revisions (a file absent on one side is diffed against /dev/null), in git’s \`diff -U3\` format. Bounded: see 413. Needs View Rules.`,
        operationId: `diff${name}`,
        parameters: [q('from', true, 'The older revision.'), q('to', false, 'The newer revision; default: the tip.')],
        responses: {
          '200': {
            description: 'The diff.',
            content: json(ref('RuleDiff'), {
              from: REV,
              to: '9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b',
              files: [
                {
                  path: 'simple_rules/aws/AWS.Root.Login.yml',
                  unifiedDiff:
                    '--- a/simple_rules/aws/AWS.Root.Login.yml\n+++ b/simple_rules/aws/AWS.Root.Login.yml\n@@ -4 +4 @@\n-Severity: High\n+Severity: Low\n',
                },
              ],
            }),
          },
          '400': err('`from` is missing, or a revision is not a commit id.'),
          '404': err('No history for this id, or no such commit.'),
          '413': err(
            'A file is too large to diff here: over 200,000 lines in the two versions together, or so different that aligning them would take more than 100 million line comparisons. Compare the revisions with `git diff`.',
          ),
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}/restore`]: {
      parameters: [id],
      post: {
        tags,
        summary: `Restore a ${noun} to a revision`,
        description: `One new commit making the ${noun}’s files byte-identical to that revision, at the paths they had then (re-creating a deleted rule too), with a \`Restored-From: REV\` trailer, the usual trailers and \`X-Change-Reason\`. The unit tests of that version run first unless \`run-tests-first=false\`. Restoring what is already there commits nothing. Needs Manage Rules.`,
        operationId: `restore${name}`,
        parameters: [
          revisionParam('query', 'The commit to restore from.'),
          {
            name: 'run-tests-first',
            in: 'query',
            required: false,
            schema: { type: 'boolean', default: true },
            description: 'Run the unit tests of that version first; a failing test restores nothing (400).',
          },
          changeReason,
          IF_MATCH,
        ],
        responses: {
          '200': {
            description: 'The restored rule.',
            headers: ETAG_HEADER,
            content: json(ref(name), readExample),
          },
          '400': err('A bad parameter, or a unit test of that version failed (`testResults`); nothing was written.'),
          '404': err('The rule did not exist (or was not valid) at that revision.'),
          '409': err('The old paths now hold another rule’s files, or the id belongs to another kind.'),
          '412': PRECONDITION_FAILED,
          ...common,
        },
      },
    },
  }
}
