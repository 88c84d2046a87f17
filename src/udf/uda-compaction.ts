import { call, num } from '../sql/ast/build.ts';
import type { Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, findAll } from '../sql/ast/walk.ts';
import { foldFunctionName, UDA_FOLDED_VALUES, UDA_STATES } from './uda-state.ts';

const merged = (collector: string) => `${collector}_merge`;

/** `<collector>_merge(__aN)`: the state column it merges, when `e` is that call. */
function mergedColumn(e: Expr | undefined, collector: string): string | undefined {
  if (e?.kind !== 'Function' || e.name !== merged(collector)) return undefined;
  const arg = e.args[0];
  return arg?.kind === 'Identifier' ? (arg.parts[arg.parts.length - 1] as string) : undefined;
}

const str = (value: string): Expr => ({ kind: 'String', value, span: NO_SPAN });

/**
 * The compaction of the state columns of JavaScript aggregates that keep their state serialized
 * (uda-state.ts), from the emit query of a streaming aggregation: for each call
 * `__trb_uda_g(__trb_uda_fvalues_merge(__a0), ..., __trb_uda_deltas(), __trb_uda_states_merge(__a1))`,
 * the states column becomes the one state `__trb_udafold_g(<the same arguments>)` (as the
 * collector's state, built by array_reduce) and each values column an empty list of its type.
 * Answers the compaction expression by state column; the other columns compact as usual.
 */
export function udaCompaction(emit: SelectQuery): Map<string, Expr> {
  const out = new Map<string, Expr>();
  const calls = emit.columns.flatMap((column) =>
    findAll(
      column as AnyNode,
      (n): n is FunctionCall =>
        n.kind === 'Function' &&
        (n as FunctionCall).name.startsWith('__trb_uda_') &&
        mergedColumn((n as FunctionCall).args.at(-1), UDA_STATES) !== undefined,
    ),
  );
  for (const c of calls) {
    const states = mergedColumn(c.args.at(-1), UDA_STATES) as string;
    const name = c.name.slice('__trb_uda_'.length);
    const folded = call(foldFunctionName(name), ...c.args);
    out.set(
      states,
      call('array_reduce', str('groupArrayState'), call('array_cast', call('to_nullable', folded))),
    );
    for (const a of c.args) {
      const values = mergedColumn(a, UDA_FOLDED_VALUES);
      if (values !== undefined)
        out.set(values, call('array_reduce', str('groupArrayState'), call('array_slice', a, num(1), num(0))));
    }
  }
  return out;
}
