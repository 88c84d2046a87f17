import { err } from '../../errors/tributary-error.ts';
import type { Expr, FunctionCall } from '../ast/expression.ts';

/**
 * Proton's `monotonic(n)`: a stateful function answering `n`, `n + 1`, `n + 2`, ... (int64), one
 * number per row it processes, in the order rows pass. Its argument must be a constant integer
 * (Proton refuses `monotonic(1.0)` and `monotonic('1')` with BAD_ARGUMENTS, 36).
 *
 * - Historical queries: the rows of the query in read order (`n + rowNumberInAllBlocks()`).
 * - Streaming tails: the count continues across steps (the planner adds the rows emitted so far,
 *   which a checkpoint keeps), see streaming-planner.ts.
 * - DEFAULT of a random stream: the count runs over the stream's generated rows (random-batch-sql.ts).
 */
export function monotonicStart(f: FunctionCall): bigint {
  if (f.args.length !== 1)
    throw err('BAD_ARGUMENTS', {
      detail: `Function monotonic requires 1 argument, got ${f.args.length}`,
    });
  const text = integerText(f.args[0] as Expr);
  const n = text === undefined ? undefined : BigInt(text);
  if (n === undefined || n < -(2n ** 63n) || n >= 2n ** 63n)
    throw err('BAD_ARGUMENTS', {
      detail: 'Function monotonic requires a constant integer argument (int64), e.g. monotonic(1)',
    });
  return n;
}

/** The decimal text of an integer literal (`5`, `-5`, `0x10`), else undefined. */
function integerText(e: Expr): string | undefined {
  if (e.kind === 'Unary' && e.op === '-') {
    const inner = integerText(e.operand);
    return inner === undefined ? undefined : String(-BigInt(inner));
  }
  if (e.kind !== 'Number') return undefined;
  if (/^-?\d+$/.test(e.text)) return e.text;
  if (/^0x[0-9a-f]+$/i.test(e.text)) return String(BigInt(e.text));
  return undefined;
}

/** `monotonic(n)` over the rows of one query: `toInt64(n) + toInt64(rowNumberInAllBlocks())`. */
export function monotonicExpr(f: FunctionCall): Expr {
  const at = f.span;
  const call = (name: string, args: readonly Expr[]): FunctionCall => ({
    kind: 'Function',
    name,
    args,
    distinct: false,
    span: at,
  });
  const start: Expr = { kind: 'Number', text: String(monotonicStart(f)), span: at };
  return {
    kind: 'Binary',
    op: '+',
    left: call('toInt64', [start]),
    right: call('toInt64', [call('rowNumberInAllBlocks', [])]),
    span: at,
  };
}

/** The engine SQL of `monotonic(n)` in a step that follows `offset` (engine SQL) answered rows. */
export function monotonicStepSql(f: FunctionCall, offset: string): string {
  return `(toInt64(${monotonicStart(f)}) + toInt64(${offset}) + toInt64(rowNumberInAllBlocks()))`;
}
