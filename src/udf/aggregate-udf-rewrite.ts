import { err } from '../errors/tributary-error.ts';
import { alias, call, ident, num } from '../sql/ast/build.ts';
import type { Expr, FunctionCall, WindowSpec } from '../sql/ast/expression.ts';
import type { Query, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, findAll, replace } from '../sql/ast/walk.ts';
import { isAggregateName } from '../sql/names/function-catalog.ts';
import { printExpression } from '../sql/printer/format.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';
import { translateType } from '../sql/translator/translate.ts';
import { toProtonType } from '../sql/types/proton-types.ts';
import { P } from '../streaming/sql-template.ts';
import type { SelectSource } from './select-source-columns.ts';
import { UDA_DELTAS } from './uda-deltas.ts';
import { keepsSerializedState, UDA_FOLDED_VALUES, UDA_STATES } from './uda-state.ts';
import type { UdfDefinition } from './udf-definition.ts';
import { engineFunctionName } from './udf-engine-files.ts';

/** `OVER (PARTITION BY ...)` without ORDER BY or frame: a streaming substream. */
function isSubstreamOver(over: WindowSpec | string): boolean {
  return typeof over !== 'string' && over.orderBy.length === 0 && !over.frame && !over.base;
}

const isSelect = (n: AnyNode) => n.kind === 'Select' || n.kind === 'Union';

/** The names of the JavaScript aggregates with their own emit a SELECT calls (for messages). */
function lookupNames(select: SelectQuery, lookup: (name: string) => UdfDefinition | undefined): string {
  const calls = findAll(
    select as AnyNode,
    (m): m is FunctionCall =>
      m.kind === 'Function' && lookup((m as FunctionCall).name)?.customized_emit === true,
    { skip: isSelect },
  );
  return [...new Set(calls.map((f) => f.name))].join(', ');
}

/** A SELECT calling an aggregate with its own emit emits on update; a timer of its own is refused. */
function withEmitOnUpdate(select: SelectQuery, names: string): SelectQuery {
  const emit = select.emit;
  if (emit?.periodic || emit?.delay || emit?.timeout || emit?.afterWatermark || emit?.mode === 'CHANGELOG')
    throw err('NOT_IMPLEMENTED', {
      detail: `JavaScript aggregate ${names} decides itself when to emit: the query cannot have an EMIT clause of its own`,
    });
  return {
    ...select,
    emit: { kind: 'Emit', ...(emit ?? {}), afterWatermark: false, onUpdate: true, span: NO_SPAN },
  };
}

/** The engine type's kind, as Proton compares argument types (`DateTime64(6)` -> `DateTime64`). */
function typeKind(engineType: string): string {
  const t = engineType.trim();
  const paren = t.indexOf('(');
  return paren < 0 ? t : t.slice(0, paren).trim();
}

/**
 * Proton checks a JavaScript aggregate's arguments before the call: each must be of the declared
 * type's kind (`int8` is no `datetime64`; the precision of a datetime64 may differ). Checked for
 * arguments that are columns of the query's source, whose types are known here; other expressions
 * are converted by the engine.
 */
function checkArgumentTypes(def: UdfDefinition, args: readonly Expr[], columns: ReadonlyMap<string, string>) {
  args.forEach((a, i) => {
    if (a.kind !== 'Identifier') return;
    const actual = columns.get(a.parts[a.parts.length - 1] as string);
    const declared = def.arguments[i];
    if (actual === undefined || declared === undefined) return;
    const expected = translateType(declared.type);
    if (typeKind(actual) !== typeKind(expected))
      throw err('UDF_ARGUMENT_TYPE', {
        name: def.name,
        position: i + 1,
        expected: declared.type,
        actual: toProtonType(actual),
      });
  });
}

/**
 * JavaScript aggregates as engine work: `f(a, b)` becomes `__trb_uda_f(__trb_uda_values(a),
 * __trb_uda_values(b))`, the engine function that runs the aggregate's initialize / process /
 * finalize over a group's values (udf-process.mjs). `__trb_uda_values` is the engine's groupArray,
 * an ordinary aggregate, so a historical GROUP BY, a global streaming aggregation and a window keep
 * the group's values in the engine (streaming: as -State columns of the query's state table,
 * checkpointed with it) and the function runs when a group's result is emitted; over a changelog
 * input the retracting aggregation hands it the group's live rows (retraction.ts). A select item that is the call itself keeps the column name the user
 * wrote (`f(a, b)`). An aggregate with its own emit (`has_customized_emit`) becomes
 * `array_join(__trb_uda_f(batches, sns, values..., batch))` in a SELECT that emits on update.
 * Argument count, the types of column arguments and OVER are checked as Proton does.
 */
export function rewriteAggregateUdfs(
  query: Query,
  lookup: (name: string) => UdfDefinition | undefined,
  /** The query is streaming (an aggregate with its own emit is refused in historical ones). */
  streaming: boolean,
  /** The engine types of the columns a SELECT reads from its FROM, when known (argument checks). */
  sourceColumns: (select: SelectQuery) => SelectSource | undefined = () => undefined,
): Query {
  let columnsInScope: SelectSource | undefined;
  // the SELECT being rewritten has aggregates other than JavaScript ones with their own emit
  let othersInScope = false;
  let customEmit = false;
  const isOtherAggregate = (n: AnyNode): boolean => {
    if (n.kind !== 'Function') return false;
    const f = n as FunctionCall;
    const def = lookup(f.name);
    if (def) return def.type === 'javascript' && def.is_aggregation && !def.customized_emit;
    return isAggregateName(f.name);
  };
  const isUda = (n: AnyNode): n is FunctionCall => {
    if (n.kind !== 'Function') return false;
    const def = lookup((n as FunctionCall).name);
    return def?.type === 'javascript' && def.is_aggregation;
  };
  let found = false;
  const rewriteCall = (c: FunctionCall): Expr => {
    const def = lookup(c.name) as UdfDefinition;
    found = true;
    if (c.over !== undefined && (!streaming || !isSubstreamOver(c.over)))
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${def.name} with OVER is supported as a substream of a streaming query only (OVER (PARTITION BY ...))`,
      });
    if (c.args.length !== def.arguments.length)
      throw err('UDF_ARGUMENT_COUNT', {
        name: def.name,
        passed: c.args.length,
        expected: def.arguments.length,
      });
    if (columnsInScope) checkArgumentTypes(def, c.args, columnsInScope.columns);
    if (def.customized_emit && !streaming) throw err('UDF_EMIT_IN_HISTORICAL_QUERY', { name: def.name });
    if (def.customized_emit && othersInScope)
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${def.name} declares has_customized_emit: it must be the only aggregate of its SELECT`,
      });
    // its values are tagged with the sequence numbers of the stream it reads
    if (def.customized_emit && (!columnsInScope || columnsInScope.changelog))
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${def.name} declares has_customized_emit: its SELECT must read an append stream directly (not a subquery, join, view or changelog input)`,
      });
    // a state kept serialized (uda-state.ts) needs plain value lists
    const serialized = keepsSerializedState(def) && !c.distinct && !c.filter;
    const collect =
      c.distinct && !def.customized_emit
        ? 'group_uniq_array'
        : serialized
          ? UDA_FOLDED_VALUES
          : '__trb_uda_values';
    // OVER (PARTITION BY k) moves onto the collectors, which the streaming planner turns into
    // the query's substreams (substreams.ts) like any aggregate's.
    const collected = (a: Expr): Expr => {
      const g = call(collect, a);
      return { ...g, ...(c.filter ? { filter: c.filter } : {}), ...(c.over ? { over: c.over } : {}) };
    };
    const args = c.args.map(collected);
    // The deltas of a changelog input (`process(values..., deltas)`): `__trb_uda_deltas()` is an
    // empty array, which a retracting aggregation replaces by the deltas of the group's rows
    // (aggregate-split.ts), so the function learns whether its input is a changelog as Proton's does.
    if (!def.customized_emit) {
      const deltas = call(UDA_DELTAS);
      if (!serialized) return { ...call(engineFunctionName(def), ...args, deltas), span: c.span };
      // the group's serialized states: none at a fold step (a NULL, which the collector skips),
      // one after each compaction; the NULL names the call, so two calls never share the column
      const key: Expr = { kind: 'String', value: printExpression(c), span: NO_SPAN };
      const states = call(UDA_STATES, call('nullif', key, key));
      const withOver = c.over ? { ...states, over: c.over } : states;
      return { ...call(engineFunctionName(def), ...args, deltas, withOver), span: c.span };
    }
    // An aggregate with its own emit (docs/sql-reference.md): each value carries the batch that
    // folded it and its sequence number; the function replays the older batches, processes the
    // step's batch and answers the results process() asked to emit, one row each (array_join).
    customEmit = true;
    const batch = call('to_uint64', num(P.batch));
    const udf = call(engineFunctionName(def), collected(batch), collected(ident('_tp_sn')), ...args, batch);
    return { ...call('array_join', udf), span: c.span };
  };
  const visit = (n: AnyNode): AnyNode | undefined => {
    if (n.kind === 'Select') {
      // a select item that is the call itself keeps its name
      const columns = (n as SelectQuery).columns;
      const named = columns.some(isUda)
        ? { ...n, columns: columns.map((i) => (isUda(i) ? alias(i, protonColumnName(i)) : i)) }
        : n;
      const outer = [columnsInScope, othersInScope, customEmit] as const;
      columnsInScope = sourceColumns(n as SelectQuery);
      othersInScope = columns.some(
        (i) => findAll(i, (m): m is FunctionCall => isOtherAggregate(m), { skip: isSelect }).length > 0,
      );
      customEmit = false;
      try {
        const out = replace(named as AnyNode, (m) => (m === named ? undefined : visit(m))) as SelectQuery;
        // it emits when process() says so: after every batch that changes a group, never on a timer
        return customEmit ? withEmitOnUpdate(out, lookupNames(n as SelectQuery, lookup)) : out;
      } finally {
        [columnsInScope, othersInScope, customEmit] = outer;
      }
    }
    return isUda(n) ? rewriteCall(n) : undefined;
  };
  const rewritten = replace(query, visit);
  return found ? rewritten : query;
}
