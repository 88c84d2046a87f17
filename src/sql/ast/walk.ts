import type { Span } from './span.ts';

/**
 * Generic traversal of the AST. A node is any object with a string `kind` and a `span`; the
 * traversal looks through every property (arrays, plain sub-objects such as CASE branches), so
 * it needs no per-kind table and keeps working as node kinds are added.
 */
export interface AnyNode {
  readonly kind: string;
  readonly span: Span;
}

export function isNode(value: unknown): value is AnyNode {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    typeof (value as { span?: unknown }).span === 'object'
  );
}

/** The direct child nodes of `node`, in property order. */
export function childNodes(node: object): AnyNode[] {
  const out: AnyNode[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
    } else if (isNode(v)) {
      out.push(v);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) if (k !== 'span') visit(x);
    }
  };
  for (const [k, v] of Object.entries(node)) if (k !== 'span') visit(v);
  return out;
}

/**
 * Visit `root` and its descendants depth-first, parents before children. Return `false` from
 * `visit` to skip a node's children (any other return value is ignored).
 */
export function walk(root: AnyNode, visit: (node: AnyNode, parent: AnyNode | undefined) => unknown): void {
  const go = (node: AnyNode, parent: AnyNode | undefined) => {
    if (visit(node, parent) === false) return;
    for (const c of childNodes(node)) go(c, node);
  };
  go(root, undefined);
}

/** Every node of `root` (itself included) that satisfies `test`. */
export function findAll<T extends AnyNode>(
  root: AnyNode,
  test: (n: AnyNode) => n is T,
  options: { skip?: (n: AnyNode) => boolean } = {},
): T[] {
  const out: T[] = [];
  walk(root, (n, parent) => {
    if (parent && options.skip?.(n)) return false;
    if (test(n)) out.push(n);
    return undefined;
  });
  return out;
}

/**
 * Rebuild `root` bottom-up: children are transformed first, then `fn` sees the node with its new
 * children and returns a replacement (or the node itself). Unchanged subtrees are shared, so a
 * transform that changes nothing returns `root` itself. Nodes are never mutated.
 */
export function transform<T extends AnyNode>(root: T, fn: (node: AnyNode) => AnyNode): T {
  const rebuild = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = rebuild(x);
        if (y !== x) changed = true;
        return y;
      });
      return changed ? out : v;
    }
    if (isNode(v)) return fn(rebuildProps(v) as AnyNode);
    if (v && typeof v === 'object') return rebuildProps(v);
    return v;
  };
  const rebuildProps = (o: object): object => {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      const y = k === 'span' ? x : rebuild(x);
      if (y !== x) changed = true;
      out[k] = y;
    }
    return changed ? out : o;
  };
  return rebuild(root) as T;
}

/**
 * Like `transform`, but top-down: `fn` sees each node before its children and may return a
 * replacement (whose children are then not visited) or `undefined` to keep going into it.
 */
export function replace<T extends AnyNode>(root: T, fn: (node: AnyNode) => AnyNode | undefined): T {
  const rebuild = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = rebuild(x);
        if (y !== x) changed = true;
        return y;
      });
      return changed ? out : v;
    }
    if (isNode(v)) {
      const r = fn(v);
      if (r !== undefined) return r;
      return rebuildProps(v);
    }
    if (v && typeof v === 'object') return rebuildProps(v);
    return v;
  };
  const rebuildProps = (o: object): object => {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      const y = k === 'span' ? x : rebuild(x);
      if (y !== x) changed = true;
      out[k] = y;
    }
    return changed ? out : o;
  };
  return rebuild(root) as T;
}
