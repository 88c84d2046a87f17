import { call, ident } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import type { BoundSource } from './stream-bindings.ts';

/* `_tp_delta` through joins: which side's, or the product of the sides'. */

/** The left side of `FROM s JOIN ...` when it is a stream of a changelog mode (or versioned_kv). */
export function leftChangelogStream(select: SelectQuery, sources: readonly BoundSource[]) {
  let left = select.from;
  while (left?.kind === 'Join') left = left.left;
  const m = left?.kind === 'Table' ? /^__trb_src_(\d+)$/.exec(left.name) : null;
  const source = m ? sources[Number(m[1])] : undefined;
  if (left?.kind !== 'Table' || source?.kind !== 'stream' || source.definition.mode === 'append')
    return undefined;
  return { source, alias: left.alias ?? left.name };
}

/** `_tp_delta` in the select list of a join: the left side's. */
export function qualifiedDelta(select: SelectQuery, alias: string): SelectQuery {
  const columns = select.columns.map((c) =>
    c.kind === 'Identifier' && c.parts.join('.') === '_tp_delta'
      ? ({ kind: 'Alias', expr: ident(alias, '_tp_delta'), alias: '_tp_delta', span: NO_SPAN } as Expr)
      : replace(c, (n) =>
          n.kind === 'Identifier' &&
          (n as unknown as Expr & { kind: 'Identifier' }).parts.join('.') === '_tp_delta'
            ? (ident(alias, '_tp_delta') as unknown as AnyNode)
            : undefined,
        ),
  );
  return { ...select, columns };
}

/** The fold of an aggregation over a join of changelog inputs: `_tp_delta`, its sides' product. */
export function joinDeltaOf(fold: SelectQuery, aliases: readonly string[]): SelectQuery {
  const product = aliases
    .map((a): Expr => ident(a, '_tp_delta'))
    .reduce((l, r): Expr => ({ kind: 'Binary', op: '*', left: l, right: r, span: NO_SPAN }));
  const columns = fold.columns.map((c) =>
    replace(c, (n) =>
      n.kind === 'Identifier' &&
      (n as unknown as Expr & { kind: 'Identifier' }).parts.join('.') === '_tp_delta'
        ? (call('to_int8', product) as unknown as AnyNode)
        : undefined,
    ),
  );
  return { ...fold, columns };
}
