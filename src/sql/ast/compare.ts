/**
 * Structural comparison of AST nodes, ignoring source spans: `parse(print(ast))` must equal `ast`
 * in this sense.
 */

/** A deep copy of `node` without any `span` properties (for tests and comparisons). */
export function withoutSpans<T>(node: T): T {
  if (Array.isArray(node)) return node.map((n) => withoutSpans(n)) as T;
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'span') continue;
      out[k] = withoutSpans(v);
    }
    return out as T;
  }
  return node;
}

/** Are `a` and `b` the same tree, spans aside? */
export function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameTree(x, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).filter((k) => k !== 'span' && (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => k !== 'span' && (b as Record<string, unknown>)[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => sameTree((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}
