import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { FunctionCall, Lambda } from '../sql/ast/expression.ts';
import { type AnyNode, findAll } from '../sql/ast/walk.ts';
import { isAggregateName } from '../sql/names/function-catalog.ts';
import { parseExpression } from '../sql/parser/parse.ts';
import { translateExpression } from '../sql/translator/translate.ts';
import type { UdfResolution } from './udf-service.ts';

/**
 * SQL functions (`CREATE FUNCTION f AS (x, y) -> expr`): a lambda the engine expands where a
 * query calls `f` (the engine's own SQL user-defined functions). The catalog keeps the Proton text
 * of the lambda (`source`); the engine gets it translated, at CREATE and again at every start, so
 * the function is there after a restart like any other UDF.
 */

/** The lambda of a SQL function's source; UDF_BAD_DEFINITION when the text is not one. */
export function sqlFunctionLambda(name: string, source: string): Lambda {
  let e: ReturnType<typeof parseExpression>;
  try {
    e = parseExpression(source);
  } catch (x) {
    throw err('UDF_BAD_DEFINITION', {
      detail: `the body of SQL function ${name} does not parse: ${x instanceof Error ? x.message : String(x)}`,
    });
  }
  if (e.kind !== 'Lambda')
    throw err('UDF_BAD_DEFINITION', {
      detail: `SQL function ${name} must be a lambda, as in CREATE FUNCTION ${name} AS (x) -> x + 1`,
    });
  if (new Set(e.params).size !== e.params.length)
    throw err('UDF_BAD_DEFINITION', { detail: `a parameter of SQL function ${name} is named twice` });
  const aggregates = findAll(
    e.body as AnyNode,
    (n): n is FunctionCall => n.kind === 'Function' && isAggregateName((n as FunctionCall).name),
  );
  if (aggregates.length > 0)
    throw err('NOT_IMPLEMENTED', {
      detail: `SQL function ${name} calls the aggregate ${aggregates[0]?.name}: a SQL function is a scalar expression (write the aggregate in the query, or CREATE AGGREGATE FUNCTION)`,
    });
  return e;
}

/**
 * The engine statement creating SQL function `name` from its Proton lambda; names of other
 * user-defined functions in the body resolve through `resolveFunction`.
 */
export function engineCreateSql(
  name: string,
  source: string,
  resolveFunction: (name: string) => UdfResolution | undefined,
): string {
  const lambda = sqlFunctionLambda(name, source);
  const body = translateExpression(lambda.body, {
    resolver: { resolve: () => undefined, resolveFunction },
  });
  const params = lambda.params.map((p) => quoteIdent(p)).join(', ');
  return `CREATE OR REPLACE FUNCTION ${quoteIdent(name)} AS (${params}) -> ${body}`;
}

/** Drop SQL function `name` from the engine (nothing when it is not there). */
export async function dropEngineSqlFunction(engine: Engine, name: string): Promise<void> {
  await engine.query(`DROP FUNCTION IF EXISTS ${quoteIdent(name)}`, { format: 'TSV' });
}

/** The engine's SQL functions that are not in `keep` (left by an earlier run), dropped. */
export async function dropStaleSqlFunctions(engine: Engine, keep: ReadonlySet<string>): Promise<void> {
  const r = await engine.query("SELECT name FROM system.functions WHERE origin = 'SQLUserDefined'", {
    format: 'TSV',
  });
  const names = r
    .text()
    .split('\n')
    .filter((n) => n && !keep.has(n));
  for (const n of names) await dropEngineSqlFunction(engine, n);
}
