import { err } from '../errors/tributary-error.ts';
import { andAll, conjuncts } from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import { NO_SPAN } from '../sql/ast/span.ts';

/**
 * Join alignment (`lag_behind(offset[, left_time, right_time])` in the ON of a join, Proton's
 * watermark alignment): the left side waits for the right. A left row is joined only once the
 * right side's time (the largest `right_time` it has received) has reached `left_time - offset`,
 * so it meets the right side as it stood at its own time, whatever order the two streams' rows
 * arrive in. Without time arguments each side's `_tp_time` is used.
 */
export interface Alignment {
  /** The left and right time expressions. */
  readonly left: Expr;
  readonly right: Expr;
  /** How far the right side may lag behind the left, in nanoseconds. */
  readonly lagNs: bigint;
}

const UNIT_NS: Record<string, bigint> = {
  NANOSECOND: 1n,
  MICROSECOND: 1_000n,
  MILLISECOND: 1_000_000n,
  SECOND: 1_000_000_000n,
  MINUTE: 60_000_000_000n,
  HOUR: 3_600_000_000_000n,
  DAY: 86_400_000_000_000n,
};

const bad = (detail: string) => err('BAD_ARGUMENTS', { detail });

/** Nanoseconds of a `lag_behind` offset (`1ms`, `3s`, `INTERVAL 2 SECOND`). */
function offsetNs(e: Expr | undefined): bigint {
  let value: string | undefined;
  let unit: string | undefined;
  if (e?.kind === 'Interval' && e.value.kind === 'Number') {
    value = e.value.text;
    unit = e.unit;
  } else if (e?.kind === 'Function') {
    const m = /^to_?interval_?(\w+)$/i.exec(e.name);
    const a = e.args[0];
    value = a?.kind === 'Number' ? a.text : undefined;
    unit = m?.[1]?.toUpperCase();
  }
  const per = unit === undefined ? undefined : UNIT_NS[unit];
  if (value === undefined || per === undefined || !/^\d+$/.test(value))
    throw bad(
      'lag_behind(offset[, left_time, right_time]) takes an offset such as 1ms, 3s or 1m (a whole number of nanoseconds up to days)',
    );
  return BigInt(value) * per;
}

const isLagBehind = (c: Expr): c is Expr & { kind: 'Function' } =>
  c.kind === 'Function' && c.name.toLowerCase() === 'lag_behind';

/** Whether a join's ON asks for alignment (a `lag_behind(...)` conjunct). */
export function hasAlignment(on: Expr | undefined): boolean {
  return conjuncts(on).some(isLagBehind);
}

/**
 * The ON of a join without its `lag_behind(...)` conjunct, and the alignment it asks for. The
 * time arguments default to each side's `_tp_time` (by the aliases given).
 */
export function extractAlignment(
  on: Expr | undefined,
  leftAlias: string,
  rightAlias: string,
): { on: Expr | undefined; alignment: Alignment | undefined } {
  const all = conjuncts(on);
  const found = all.filter(isLagBehind);
  if (found.length === 0) return { on, alignment: undefined };
  if (found.length > 1) throw bad('A join takes one lag_behind(...) condition');
  const f = found[0] as Expr & { kind: 'Function' };
  if (f.args.length !== 1 && f.args.length !== 3)
    throw bad(`lag_behind() takes (offset[, left_time, right_time]); got ${f.args.length} arguments`);
  const alignment: Alignment = {
    lagNs: offsetNs(f.args[0]),
    left: f.args[1] ?? ident(leftAlias, '_tp_time'),
    right: f.args[2] ?? ident(rightAlias, '_tp_time'),
  };
  return { on: andAll(all.filter((c) => c !== f)), alignment };
}

/** A time expression as nanoseconds since the epoch (an Int64 the engine compares exactly). */
export function nanos(e: Expr): Expr {
  return call('to_unix_timestamp64_nano', call('to_datetime64', e, num(9)));
}

/** Placeholders of an aligned enrichment's left filter (join-inputs.ts EnrichInputs fills them). */
export const ALIGN_UNTIL = '__TRB_ALIGN_T__';
export const ALIGN_PREV_UNTIL = '__TRB_ALIGN_PT__';
export const ALIGN_PREV_SN = '__TRB_ALIGN_PSN__';

/**
 * The left rows an aligned step joins: those whose time has been reached (`t <= until`) and that
 * an earlier step did not join (`sn <= prevSn AND t <= prevUntil`). `until` only grows, so each
 * left row is joined exactly once.
 */
export function alignedLeftFilter(a: Alignment, leftSn: Expr): Expr {
  const t = nanos(a.left);
  const bin = (op: '<=' | 'AND', left: Expr, right: Expr): Expr => ({
    kind: 'Binary',
    op,
    left,
    right,
    span: NO_SPAN,
  });
  const reached = bin('<=', t, num(ALIGN_UNTIL));
  const earlier = bin('AND', bin('<=', leftSn, num(ALIGN_PREV_SN)), bin('<=', t, num(ALIGN_PREV_UNTIL)));
  return bin('AND', reached, { kind: 'Unary', op: 'NOT', operand: earlier, span: NO_SPAN } as Expr);
}
