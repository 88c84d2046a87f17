import type { BinaryOp, Expr } from '../ast/expression.ts';
import { andAll, conjuncts } from './query-facts.ts';

/**
 * Rewind (backfill) predicates: in a streaming query, a WHERE conjunct comparing `_tp_time` or
 * `_tp_sn` with a constant seeks the stream instead of filtering it (streaming-sql-notes.md §1.4).
 */
export interface RewindPredicate {
  readonly column: '_tp_time' | '_tp_sn';
  /** The comparison with the column on the left (`5 < _tp_sn` is reported as `_tp_sn > 5`). */
  readonly op: '=' | '!=' | '<' | '>' | '<=' | '>=';
  /** The constant side. `earliest_ts()` / `earliest_timestamp()` appear as that call. */
  readonly value: Expr;
  /** The conjunct as written. */
  readonly expr: Expr;
}

const FLIP: Record<string, RewindPredicate['op']> = {
  '=': '=',
  '!=': '!=',
  '<': '>',
  '>': '<',
  '<=': '>=',
  '>=': '<=',
};

function isConstant(e: Expr): boolean {
  switch (e.kind) {
    case 'Number':
    case 'String':
    case 'Null':
    case 'Bool':
    case 'Interval':
      return true;
    case 'Unary':
      return isConstant(e.operand);
    case 'Binary':
      return isConstant(e.left) && isConstant(e.right);
    case 'Cast':
      return isConstant(e.expr);
    case 'Function':
      // now(), to_datetime('...'), earliest_ts(): constant for the query.
      return e.over === undefined && e.args.every(isConstant);
    case 'Tuple':
    case 'Array':
      return e.elements.every(isConstant);
    default:
      return false;
  }
}

function rewindColumn(
  e: Expr,
  aliases: ReadonlyMap<string, '_tp_time' | '_tp_sn'>,
): '_tp_time' | '_tp_sn' | undefined {
  if (e.kind !== 'Identifier') return undefined;
  const last = e.parts[e.parts.length - 1] as string;
  if (last === '_tp_time' || last === '_tp_sn') return last;
  return e.parts.length === 1 ? aliases.get(last) : undefined;
}

/**
 * Find the rewind predicates of a WHERE clause. `aliases` maps names that stand for `_tp_time` /
 * `_tp_sn` (a CTE or view column `_tp_time AS event_time`). Returns the predicates and the rest of
 * the WHERE clause without them.
 */
export function rewindPredicates(
  where: Expr | undefined,
  aliases: ReadonlyMap<string, '_tp_time' | '_tp_sn'> = new Map(),
): { predicates: RewindPredicate[]; rest: Expr | undefined } {
  const predicates: RewindPredicate[] = [];
  const rest: Expr[] = [];
  for (const c of conjuncts(where)) {
    if (c.kind === 'Binary' && c.op in FLIP) {
      const op = c.op as BinaryOp & RewindPredicate['op'];
      const left = rewindColumn(c.left, aliases);
      const right = rewindColumn(c.right, aliases);
      if (left && isConstant(c.right)) {
        predicates.push({ column: left, op, value: c.right, expr: c });
        continue;
      }
      if (right && isConstant(c.left)) {
        predicates.push({ column: right, op: FLIP[op] as RewindPredicate['op'], value: c.left, expr: c });
        continue;
      }
    }
    if (c.kind === 'Between' && !c.not) {
      const col = rewindColumn(c.expr, aliases);
      if (col && isConstant(c.low) && isConstant(c.high)) {
        predicates.push(
          { column: col, op: '>=', value: c.low, expr: c },
          { column: col, op: '<=', value: c.high, expr: c },
        );
        continue;
      }
    }
    rest.push(c);
  }
  return { predicates, rest: andAll(rest) };
}
