/**
 * Small helpers over SQL text that need no parser: splitting a list at top-level commas, recognising
 * plain identifiers, quoting names for display. (Nothing here parses SQL; see src/sql for that.)
 */

/** Split `a, f(b, c), 'x,y'` at the commas that are not inside brackets or quotes. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

/** `(a, b)` -> `a, b` when the outer parentheses enclose the whole text. */
export function stripOuterParens(text: string): string {
  const t = text.trim();
  if (!t.startsWith('(') || !t.endsWith(')')) return t;
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0 && i < t.length - 1) return t;
    }
  }
  return t.slice(1, -1).trim();
}

const PLAIN_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A name that needs no quoting. */
export function isPlainIdentifier(name: string): boolean {
  return PLAIN_IDENT.test(name);
}

/** A bare column reference (`col` or `` `col` ``), answered unquoted; undefined for any other expression. */
export function bareIdentifier(expr: string): string | undefined {
  const t = expr.trim();
  if (PLAIN_IDENT.test(t)) return t;
  const m = /^`((?:[^`\\]|\\.)*)`$/.exec(t);
  return m ? (m[1] ?? '').replace(/\\(.)/g, '$1') : undefined;
}

/** Quote a name for display only when needed (Proton's SHOW CREATE style). */
export function displayName(name: string): string {
  return isPlainIdentifier(name) ? name : '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/**
 * The identifiers an expression names (column references), unquoted: bare words and `quoted` or
 * "quoted" names that are not followed by `(` (function names) and not inside string literals.
 * Keywords (`AND`, `INTERVAL`, ...) come back too; callers look up names they know.
 */
export function referencedNames(expr: string): Set<string> {
  const out = new Set<string>();
  let i = 0;
  const n = expr.length;
  const followedByParen = (at: number) => /^\s*\(/.test(expr.slice(at, at + 64));
  while (i < n) {
    const c = expr[i] as string;
    if (c === "'") {
      for (i++; i < n && expr[i] !== "'"; i++) if (expr[i] === '\\') i++;
      i++;
    } else if (c === '`' || c === '"') {
      let name = '';
      for (i++; i < n && expr[i] !== c; i++) {
        if (expr[i] === '\\') i++;
        name += expr[i] ?? '';
      }
      i++;
      if (!followedByParen(i)) out.add(name);
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr.slice(i)) as RegExpExecArray;
      i += m[0].length;
      if (!followedByParen(i)) out.add(m[0]);
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9][A-Za-z0-9_.]*/.exec(expr.slice(i)) as RegExpExecArray;
      i += m[0].length;
    } else i++;
  }
  return out;
}
