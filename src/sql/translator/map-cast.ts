import type { Expr } from '../ast/expression.ts';

/**
 * Proton's `map_cast(keys, values)` builds the map from two arrays (or maps) when its first argument
 * is one (`map_from_arrays`), and is the engine's `map(k1, v1, ...)` otherwise. The engine decides
 * by type; the translator by what it can see: literals, functions that return arrays or maps, the
 * select aliases naming such an expression, and columns of a known array or map type.
 */

/** Proton functions whose result is an array or a map. */
const ARRAY_OR_MAP_FUNCTION =
  /^(group_(uniq_)?array\w*|array_(cast|map|filter|sort|reverse_sort|partial_sort|partial_reverse_sort|distinct|concat|slice|push_back|push_front|pop_back|pop_front|resize|compact|zip|enumerate\w*|reverse|shuffle|flatten|intersect|union|fill|reverse_fill|split|reverse_split|rotate_\w+|shift_\w+|difference|cum_sum\w*)|range|split_by_\w+|extract_all\w*|map_keys|map_values|map_cast|map_from_arrays|map_filter|map_apply|map_update|map_concat|top_k\w*|min_k|max_k|lags|tokens|ngrams|alpha_tokens)$/i;

const ARRAY_OR_MAP_TYPE = /^(array|map)\s*\(/i;

export interface MapCastScope {
  /** The expression a select alias of the current SELECT (or an enclosing one) names. */
  aliasTarget(name: string): Expr | undefined;
  /** The type of a source column, if known. */
  columnType(parts: readonly string[]): string | undefined;
}

/** Whether `e` is, as far as the translator can tell, an array or a map. */
export function isArrayOrMap(e: Expr, scope: MapCastScope, seen: Set<string> = new Set()): boolean {
  switch (e.kind) {
    case 'Array':
    case 'Map':
      return true;
    case 'Function':
      return ARRAY_OR_MAP_FUNCTION.test(e.name);
    case 'Cast':
      return /^(array|map)$/i.test(e.type.name);
    case 'Alias':
      return isArrayOrMap(e.expr, scope, seen);
    case 'Identifier': {
      const name = e.parts.join('.');
      if (e.parts.length === 1 && !seen.has(name)) {
        const target = scope.aliasTarget(name);
        if (target) return isArrayOrMap(target, scope, new Set([...seen, name]));
      }
      const type = scope.columnType(e.parts);
      return type !== undefined && ARRAY_OR_MAP_TYPE.test(type);
    }
    default:
      return false;
  }
}
