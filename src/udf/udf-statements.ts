import { actorOf } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { StaticRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { CreateFunction, DropStatement, ShowStatement } from '../sql/ast/statement.ts';
import { printExpression } from '../sql/printer/format.ts';
import { printDataType } from '../sql/types/data-type.ts';
import type { UdfInput } from './udf-definition.ts';
import type { UdfService } from './udf-service.ts';

/** The create request a CREATE [OR REPLACE] [AGGREGATE | REMOTE] FUNCTION statement makes. */
export function udfInputOf(s: CreateFunction): UdfInput {
  if (s.variant === 'SQL')
    return { name: s.name, type: 'sql', return_type: '', source: printExpression(s.lambda as Expr) };
  const base = {
    name: s.name,
    arguments: (s.params ?? []).map((p) => ({ name: p.name, type: printDataType(p.type) })),
    return_type: s.returns ? printDataType(s.returns) : '',
  };
  if (s.variant === 'REMOTE') {
    let timeout: number | undefined;
    if (s.executionTimeout) {
      const text = printExpression(s.executionTimeout);
      timeout = Number(text);
      if (!Number.isInteger(timeout))
        throw err('UDF_BAD_DEFINITION', { detail: `EXECUTION_TIMEOUT must be milliseconds (got ${text})` });
    }
    return {
      ...base,
      type: 'remote',
      url: s.url ?? '',
      auth_method: s.authMethod ?? 'none',
      ...(s.authHeader !== undefined
        ? { auth_context: { key_name: s.authHeader, key_value: s.authKey ?? '' } }
        : {}),
      ...(timeout !== undefined ? { execution_timeout: timeout } : {}),
    };
  }
  if (s.language !== 'JAVASCRIPT')
    throw err('UDF_BAD_DEFINITION', {
      detail: `LANGUAGE ${s.language} is not supported; functions are written in JAVASCRIPT`,
    });
  return { ...base, type: 'javascript', is_aggregation: s.aggregate, source: s.body ?? '' };
}

/** CREATE [OR REPLACE] [AGGREGATE | REMOTE] FUNCTION [IF NOT EXISTS] ... */
export function createFunctionHandler(udfs: UdfService): StatementHandler<CreateFunction> {
  return async (s, ctx) => {
    const input = udfInputOf(s);
    return statementPlan(ctx.sql, 'create', async () => {
      await udfs.create(input, actorOf(ctx.options.user.username), {
        replace: s.orReplace,
        ifNotExists: s.ifNotExists,
      });
    });
  };
}

/** DROP FUNCTION [IF EXISTS] name */
export function dropFunctionHandler(udfs: UdfService): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      const dropped = await udfs.drop(s.target.name);
      if (!dropped && !s.ifExists) throw err('UDF_NOT_FOUND', { name: s.target.name });
    });
}

const SHOW_HEADER = [
  { name: 'name', type: 'string' },
  { name: 'type', type: 'string' },
  { name: 'is_aggregation', type: 'bool' },
  { name: 'arguments', type: 'string' },
  { name: 'return_type', type: 'string' },
];

/** SHOW FUNCTIONS [LIKE ...]: the user-defined functions, by name. */
export function showFunctionsHandler(udfs: UdfService): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const rows = udfs
      .list()
      .filter((f) => test(f.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((f) => [
        f.name,
        f.type,
        f.is_aggregation,
        f.arguments.map((a) => (a.type ? `${a.name} ${a.type}` : a.name)).join(', '),
        f.return_type,
      ]);
    return new StaticRows(SHOW_HEADER, rows, ctx.sql, 'show');
  };
}
