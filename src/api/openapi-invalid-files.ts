// The OpenAPI part of the invalid files (tag Operations): the InvalidFile entry /status lists (its
// first 100) and GET /status/invalid-files pages (all of them, by path), with its parameters; and
// the problem shape of a file, shared with /status's other file lists.
import { AUTH_ERRORS, err, json, type Obj, ref } from './openapi-common.js'

/** A problem of a file at a place: its line and column, in `file` when not the file itself. */
export const FILE_PROBLEM = {
  type: 'object',
  required: ['message', 'line', 'column'],
  properties: {
    message: { type: 'string', description: 'At most 500 characters (longer ones end in `... (truncated)`).' },
    line: { type: 'integer', nullable: true },
    column: { type: 'integer', nullable: true },
    file: {
      type: 'string',
      description: 'The file line and column are in, when not `path` (its .py, a helper).',
    },
  },
}

export const INVALID_FILE_SCHEMAS: Record<string, Obj> = {
  InvalidFile: {
    type: 'object',
    description: 'A file of the served revision that does not parse or validate, or shares an id.',
    required: ['path', 'ruleId', 'errors'],
    properties: {
      path: { type: 'string' },
      ruleId: { type: 'string', nullable: true },
      errors: {
        type: 'array',
        maxItems: 20,
        description:
          'Its problems: at most 20; when it has more, the 20th says how many are not listed (`rulekeeper validate` on a checkout lists them all).',
        items: FILE_PROBLEM,
      },
    },
  },
  InvalidFilePage: {
    type: 'object',
    required: ['results', 'next'],
    properties: {
      results: { type: 'array', items: ref('InvalidFile') },
      next: { type: 'string', nullable: true, description: 'The cursor of the next page; null on the last page.' },
    },
  },
}

export function invalidFilePaths(): Obj {
  const q = (name: string, description: string, schema: Obj) => ({
    name,
    in: 'query',
    required: false,
    schema,
    description,
  })
  return {
    '/status/invalid-files': {
      get: {
        tags: ['Operations'],
        summary: 'Invalid files, paged',
        description:
          'Every invalid file of the served revision, by path (byte order), a page at a time: `/status` lists the first 100 and, when there are more, gives `invalidFilesNext`, the cursor of the page after them. A cursor names the last path returned, so a walk never repeats a path nor skips one that stayed invalid during it. Needs View Rules.',
        operationId: 'listInvalidFiles',
        parameters: [
          q('cursor', 'The `next` of the previous page (or `invalidFilesNext` of `/status`), as it is.', {
            type: 'string',
          }),
          q('limit', 'Page size, 1–1000 (default 100).', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
        ],
        responses: {
          '200': { description: 'A page of invalid files.', content: json(ref('InvalidFilePage')) },
          '400': err('A bad limit or cursor, or an unknown parameter.', {
            message: 'cursor is not valid: pass the `next` of the previous page as it is',
            code: 'BadRequest',
          }),
          ...AUTH_ERRORS,
        },
      },
    },
  }
}
