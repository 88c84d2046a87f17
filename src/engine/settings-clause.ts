import type { EngineSettings } from './engine.ts';

/** Quote a string as a ClickHouse string literal. */
export function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Quote an identifier with backticks (always; names may be keywords or hold any character). */
export function quoteIdent(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

function literal(value: string | number | boolean): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : quoteString(String(value));
  if (typeof value === 'boolean') return value ? '1' : '0';
  return quoteString(value);
}

/** `INSERT ... VALUES (...)` / `INSERT ... FORMAT x <data>`: the statement ends in inline data. */
const INLINE_DATA_INSERT = /^\s*insert\s[\s\S]*?\b(?:values\b|format\s+[a-z])/i;

/**
 * Append a SETTINGS clause to a statement. The engine accepts several SETTINGS clauses in a row,
 * so this is safe whether or not the statement has one already. An INSERT that ends in inline data
 * cannot take a trailing clause (it would be read as data) and is returned unchanged.
 */
export function withSettings(
  sql: string,
  settings: EngineSettings | undefined,
  options: { merge?: boolean } = {},
): string {
  const trimmed = sql.replace(/[\s;]+$/u, '');
  if (!settings || INLINE_DATA_INSERT.test(trimmed)) return trimmed;
  const entries = Object.entries(settings);
  if (entries.length === 0) return trimmed;
  const list = entries.map(([k, v]) => `${k} = ${literal(v)}`).join(', ');
  // Under `readonly = 1` a second clause could not change anything, so settings that must apply
  // together with the statement's own trailing clause join it (one clause is checked as a whole).
  if (options.merge && endsInSettingsClause(trimmed)) return `${trimmed}, ${list}`;
  return `${trimmed}\nSETTINGS ${list}`;
}

/** The statement ends in its own top-level SETTINGS clause (no parenthesis after the keyword). */
const TRAILING_SETTINGS = /\bSETTINGS\s+[^()]*$/i;

/** Quoted strings and identifiers (their text must not count as SQL) and comments. */
const QUOTED = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|--[^\n]*|\/\*[\s\S]*?\*\//g;

export function endsInSettingsClause(sql: string): boolean {
  return TRAILING_SETTINGS.test(sql.replace(QUOTED, "''"));
}
