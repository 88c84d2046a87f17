import type { Expr } from '../ast/expression.ts';

/**
 * Proton answers `bool` (true/false) where the engine answers uint8 0/1: comparisons, logical
 * operators, LIKE/IN/BETWEEN/IS NULL, and the predicate functions below (issue 13, scope 1). The
 * translator wraps a select item that is such a condition in `toBool(...)` (keeping its name), so
 * result headers say `bool` and values print `true`/`false`. Conditions nested inside other
 * expressions (`sum(a > 1)`, `[a = b]`) keep the engine's type.
 */
const CONDITION_OPS: ReadonlySet<string> = new Set([
  'OR',
  'AND',
  '=',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  'LIKE',
  'NOT LIKE',
  'ILIKE',
  'NOT ILIKE',
  'IN',
  'NOT IN',
  'GLOBAL IN',
  'GLOBAL NOT IN',
]);

/**
 * Predicate functions Proton answers as bool, by their lowercase name (snake_case and engine
 * spellings). Not all of them: `has_all`, `has_any`, `has_substr` and `array_all` stay uint8 there.
 */
const CONDITION_FUNCTIONS: ReadonlySet<string> = new Set([
  'equals',
  'not_equals',
  'notequals',
  'less',
  'greater',
  'less_or_equals',
  'lessorequals',
  'greater_or_equals',
  'greaterorequals',
  'and',
  'or',
  'not',
  'xor',
  'like',
  'not_like',
  'notlike',
  'ilike',
  'not_ilike',
  'notilike',
  'match',
  'multi_match_any',
  'multimatchany',
  'has',
  'empty',
  'not_empty',
  'notempty',
  'starts_with',
  'startswith',
  'ends_with',
  'endswith',
  'is_null',
  'isnull',
  'is_not_null',
  'isnotnull',
  'in',
  'not_in',
  'notin',
  'is_nan',
  'isnan',
  'is_finite',
  'isfinite',
  'is_infinite',
  'isinfinite',
  'array_exists',
  'arrayexists',
  'point_in_polygon',
  'pointinpolygon',
]);

/** Whether the expression is a condition Proton answers as `bool`. */
export function isCondition(e: Expr): boolean {
  switch (e.kind) {
    case 'Binary':
      return CONDITION_OPS.has(e.op);
    case 'Unary':
      return e.op === 'NOT';
    case 'Between':
    case 'IsNull':
      return true;
    case 'Function':
      return e.over === undefined && !e.params && CONDITION_FUNCTIONS.has(e.name.toLowerCase());
    default:
      return false;
  }
}

/** The expression as `to_bool(e)` when it is a condition, else unchanged. */
export function asBool(e: Expr): Expr {
  return isCondition(e) ? { kind: 'Function', name: 'to_bool', args: [e], distinct: false, span: e.span } : e;
}
