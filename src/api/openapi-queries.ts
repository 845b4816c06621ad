// The OpenAPI part of POST /queries (query-route.ts): the request and the page it answers.
import { err, json, type Obj, ref } from './openapi-common.js'

export const QUERY_SCHEMAS: Obj = {
  QueryRequest: {
    type: 'object',
    required: ['sql'],
    additionalProperties: false,
    properties: {
      sql: {
        type: 'string',
        description:
          'One SELECT in DuckDB’s dialect over the event tables (`panther_logs.public.<table>` or `<table>`), with Panther’s time macros (p_occurs_since, p_occurs_between, p_occurs_around, p_occurs_after, p_occurs_before) and Snowflake path access (`col:field::string`) rewritten first (docs/queries.md). At most queries.maxSqlBytes (64 KiB) of UTF-8.',
      },
      pageSize: {
        type: 'integer',
        minimum: 1,
        description: 'Rows per page (default queries.defaultPageSize, 100; at most queries.maxPageSize, 1,000).',
      },
      cursor: { type: 'string', description: 'The `next` of the previous page, sent with the same sql.' },
    },
  },
  QueryPage: {
    type: 'object',
    required: ['columns', 'rows', 'next'],
    properties: {
      columns: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'type'],
          properties: {
            name: { type: 'string' },
            type: { type: 'string', description: 'DuckDB’s type, e.g. VARCHAR, BIGINT, TIMESTAMP, JSON.' },
          },
        },
      },
      rows: {
        type: 'array',
        items: { type: 'object', additionalProperties: true },
        description:
          'One object per row, keyed by column name. Integers are numbers while exact in a double, else decimal strings; DECIMAL a number when whole, else its exact text; DATE `YYYY-MM-DD`; TIMESTAMP RFC 3339 UTC; BLOB base64; STRUCT an object; LIST an array; MAP an array of {key, value}; JSON columns the JSON they hold.',
      },
      next: {
        type: 'string',
        nullable: true,
        description:
          'The cursor of the next page; null on the last. A page ends early, with a cursor, when its rows reach queries.maxPageBytes (8 MiB) of JSON; its first row is always answered.',
      },
    },
  },
}

export function queryPaths(): Obj {
  return {
    '/queries': {
      post: {
        tags: ['Queries'],
        summary: 'Run a read-only SQL query over the stored events',
        description:
          'Runs one SELECT on the embedded DuckDB over the stored events and answers a page of its rows. A later page re-runs the query (its macros at the first page’s time) and skips to its first row: add an ORDER BY for pages that follow each other exactly. The query reads the event tables only (no files, network, extensions, ATTACH, COPY or SET), within a memory limit, and is interrupted past queries.timeoutMs (30 s). Needs Query Data.',
        operationId: 'runQuery',
        requestBody: { required: true, content: json(ref('QueryRequest')) },
        responses: {
          '200': { description: 'A page of rows.', content: json(ref('QueryPage')) },
          '400': err(
            'Not one SELECT (the statement kind is named), SQL DuckDB cannot parse or bind (its message, with `line` and, when the text was not rewritten, `column`), a bad macro argument, a bad pageSize or cursor, a file or setting the query may not touch, the time limit (`reason: timeout`) or the memory limit.',
          ),
          '401': err('The `X-API-Key` header is missing, or names an unknown, revoked or expired token.'),
          '403': err('The token lacks the Query Data permission.'),
          '413': err('The SQL or the body is too large.'),
          '415': err('The body is not JSON.'),
          '503': {
            ...err('Too many queries are running and waiting.'),
            headers: { 'Retry-After': { description: 'Seconds.', schema: { type: 'integer', minimum: 1 } } },
          },
        },
      },
    },
  }
}
