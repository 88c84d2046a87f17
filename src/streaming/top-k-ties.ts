import { alias, call, ident, num } from '../sql/ast/build.ts';
import type { Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';

const TOP_K = new Set(['top_k', 'top_k_exact']);

/** A top_k call answering (item, count) pairs with a constant k: its k, else undefined. */
function pairsK(f: FunctionCall): number | undefined {
  if (!TOP_K.has(f.name.toLowerCase()) || f.args.length < 2 || f.args.length > 3) return undefined;
  const [, k, withCount] = f.args;
  const n = k?.kind === 'Number' ? Number(k.text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) return undefined;
  const counts =
    withCount === undefined ||
    (withCount.kind === 'Number' && Number(withCount.text) !== 0) ||
    (withCount.kind === 'Bool' && withCount.value);
  return counts ? n : undefined;
}

/**
 * `top_k(x, k[, true])` of a streaming aggregation over one stream, with ties in count in a fixed
 * order: Proton's single space-saving state moves an item up only past items of a strictly
 * smaller count, so among equal counts the item that reached its count first (its last row
 * earliest) comes first (0018_query_state1_func id 31, 0008 ids 0, 12). The engine merges partial
 * states with an unstable sort, so the order of ties changed with how states were merged (after a
 * RECOVER too). Rewritten as
 * `array_slice(array_sort(t -> (-count, last_sn[item]), top_k(x, 3k, true, 1)), 1, k)` with
 * `last_sn = max_map(map(to_string(x), _tp_sn))` (`_tp_sn` numbers each row of the stream), a second aggregate kept and checkpointed beside
 * the first (the same 3k counters top_k(x, k) keeps, all read before the tie order cuts at k).
 */
export function topKTiesOrdered(select: SelectQuery): SelectQuery {
  // The stream itself (its bound source), whose rows carry `_tp_sn`; not a CTE or a view's name.
  if (select.from?.kind !== 'Table' || !/^__trb_src_\d+$/.test(select.from.name)) return select;
  const rewrite = (e: Expr): Expr =>
    replace(e, (n) => {
      if (n.kind !== 'Function') return undefined;
      const f = n as unknown as FunctionCall;
      const k = pairsK(f);
      if (k === undefined) return undefined;
      const x = f.args[0] as Expr;
      const counters: FunctionCall = { ...f, args: [x, num(3 * k), num(1), num(1)] };
      const lastSn = call('max_map', call('map', call('to_string', x), ident('_tp_sn')));
      const t = ident('__trb_tk');
      const order: Expr = {
        kind: 'Tuple',
        elements: [
          {
            kind: 'Unary',
            op: '-',
            operand: call('to_int64', call('tuple_element', t, num(2))),
            span: NO_SPAN,
          },
          call('array_element', lastSn, call('to_string', call('tuple_element', t, num(1)))),
        ],
        span: NO_SPAN,
      };
      const sorted = call(
        'array_sort',
        { kind: 'Lambda', params: ['__trb_tk'], body: order, span: NO_SPAN },
        counters,
      );
      return call('array_slice', sorted, num(1), num(k)) as unknown as AnyNode;
    }) as Expr;
  let changed = false;
  const columns = select.columns.map((c) => {
    const out = rewrite(c);
    if (out === c) return c;
    changed = true;
    return c.kind === 'Alias' ? out : alias(out, protonColumnName(c));
  });
  return changed ? { ...select, columns } : select;
}
