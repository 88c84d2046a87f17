import { err } from '../errors/tributary-error.ts';
import { alias, call } from '../sql/ast/build.ts';
import type { Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';
import type { UdfDefinition } from './udf-definition.ts';
import { engineFunctionName } from './udf-engine-files.ts';

/**
 * JavaScript aggregates as engine work: `f(a, b)` becomes `__trb_uda_f(__trb_uda_values(a),
 * __trb_uda_values(b))`, the engine function that runs the aggregate's initialize / process /
 * finalize over a group's values (udf-process.mjs). `__trb_uda_values` is the engine's groupArray,
 * an ordinary aggregate, so a historical GROUP BY, a global streaming aggregation and a window keep
 * the group's values in the engine (streaming: as -State columns of the query's state table,
 * checkpointed with it) and the function runs when a group's result is emitted; over a changelog
 * input the retracting aggregation hands it the group's live rows (retraction.ts). A select item
 * that is the call itself keeps the column name the user wrote (`f(a, b)`).
 */
export function rewriteAggregateUdfs(
  query: Query,
  lookup: (name: string) => UdfDefinition | undefined,
  /** The query is streaming (an aggregate with its own emit is refused in historical ones). */
  streaming: boolean,
): Query {
  const isUda = (n: AnyNode): n is FunctionCall => {
    if (n.kind !== 'Function') return false;
    const def = lookup((n as FunctionCall).name);
    return def?.type === 'javascript' && def.is_aggregation;
  };
  let found = false;
  const rewriteCall = (c: FunctionCall): Expr => {
    const def = lookup(c.name) as UdfDefinition;
    found = true;
    if (c.over !== undefined)
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${def.name} with OVER (substreams) is not supported yet`,
      });
    if (c.args.length !== def.arguments.length)
      throw err('UDF_ARGUMENT_COUNT', {
        name: def.name,
        passed: c.args.length,
        expected: def.arguments.length,
      });
    if (def.customized_emit && !streaming) throw err('UDF_EMIT_IN_HISTORICAL_QUERY', { name: def.name });
    if (def.customized_emit)
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${def.name} declares has_customized_emit: aggregates that decide themselves when to emit are not supported yet`,
      });
    const collect = c.distinct ? 'group_uniq_array' : '__trb_uda_values';
    const args = c.args.map((a) => {
      const g = call(collect, a);
      return c.filter ? { ...g, filter: c.filter } : g;
    });
    return { ...call(engineFunctionName(def), ...args), span: c.span };
  };
  const visit = (n: AnyNode): AnyNode | undefined => {
    if (n.kind === 'Select') {
      // a select item that is the call itself keeps its name
      const columns = (n as SelectQuery).columns;
      if (!columns.some(isUda)) return undefined;
      const named = { ...n, columns: columns.map((i) => (isUda(i) ? alias(i, protonColumnName(i)) : i)) };
      return replace(named as AnyNode, (m) => (m === named ? undefined : visit(m)));
    }
    return isUda(n) ? rewriteCall(n) : undefined;
  };
  const rewritten = replace(query, visit);
  return found ? rewritten : query;
}
