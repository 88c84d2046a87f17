import type { FastifyInstance } from 'fastify';
import { err, isTributaryError } from '../../errors/tributary-error.ts';
import { describeEngineSql } from '../../queries/statements/select-statement.ts';
import {
  type Analysis,
  analyze,
  fillResultTypes,
  formatSql,
  isSqlSyntaxError,
  parseDdl,
  parseStatement,
  syntaxErrorToTributary,
  translate,
} from '../../sql/index.ts';
import { guardDepth } from '../../sql/syntax/too-deep.ts';
import { READ } from '../access.ts';
import type { Services } from '../services.ts';

const sqlBody = {
  body: {
    type: 'object',
    required: ['sql'],
    additionalProperties: false,
    properties: { sql: { type: 'string', minLength: 1 } },
  },
} as const;

/** Run `fn`, turning SQL syntax errors into SQL_SYNTAX_ERROR (62, with line and column). */
function withSyntaxErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw isSqlSyntaxError(e) ? syntaxErrorToTributary(e) : e;
  }
}

/**
 * The analysis of a statement, with the result column types the engine gives for a SELECT's
 * historical form (`DESCRIBE (<engine SQL>)`). Streaming-only SQL, which has no engine form,
 * keeps the types the analyzer knows (columns read straight from a stream).
 */
async function analyzeSql(s: Services, sql: string): Promise<Analysis> {
  const analysis = withSyntaxErrors(() => analyze(sql, s.resolver));
  const statement = parseStatement(sql);
  if (statement.kind !== 'Select' && statement.kind !== 'Union') return analysis;
  let engineSql: string;
  try {
    engineSql = translate(statement, { resolver: s.resolver });
  } catch (e) {
    if (isTributaryError(e) && e.errorName === 'NOT_IMPLEMENTED') return analysis;
    throw e;
  }
  return fillResultTypes(analysis, await describeEngineSql(s.engine, engineSql));
}

/**
 * SQL utilities that change nothing (allowed to read_only users): format, analyze, and the DDL
 * parser of the pipeline pages.
 */
export function sqlToolRoutes(app: FastifyInstance, s: Services): void {
  app.post('/v1beta2/format', { schema: sqlBody, config: READ }, async (request) => {
    const { sql } = request.body as { sql: string };
    return guardDepth(() => ({ sql: withSyntaxErrors(() => formatSql(sql)) }));
  });

  app.post('/v1beta2/sqlanalyze', { schema: sqlBody, config: READ }, async (request) => {
    const { sql } = request.body as { sql: string };
    return guardDepth(() => analyzeSql(s, sql));
  });

  // The body is a bare JSON string: `"CREATE STREAM ..."`. As in Timeplus, the body is read as JSON
  // whatever its Content-Type (a text/plain body must hold the JSON string too).
  app.post('/v1beta2/pipeline/parseddl', { config: READ }, async (request) => {
    const contentType = String(request.headers['content-type'] ?? '').toLowerCase();
    const body = /^application\/(.+\+)?json/.test(contentType) ? request.body : jsonOf(request.body);
    if (typeof body !== 'string') {
      const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a JSON ${typeof body}`;
      throw err('INVALID_FIELD', {
        field: 'body',
        detail: `must be a JSON string holding the DDL statement (e.g. "CREATE STREAM s (a int)"), got ${got}`,
      });
    }
    return guardDepth(() => parseDdl(body));
  });
}

/** A body the JSON parser did not read (text or bytes), read as JSON. */
function jsonOf(body: unknown): unknown {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  try {
    return JSON.parse(text);
  } catch (e) {
    throw err('INVALID_REQUEST', { detail: `the body is not valid JSON (${(e as Error).message})` });
  }
}
