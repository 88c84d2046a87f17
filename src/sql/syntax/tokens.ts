/**
 * Tokens of the Proton dialect. Keywords are not a token type: they are `ident` tokens whose
 * upper-cased text the parser compares (keywords are case-insensitive, identifiers are not).
 */
export type TokenType =
  /** A bare word: identifier or keyword. `value` is the text as written. */
  | 'ident'
  /** A `backtick` or "double-quoted" identifier; `value` is the unquoted name. Never a keyword. */
  | 'quoted'
  /** A 'string' or $$heredoc$$ literal; `value` is the decoded text. */
  | 'string'
  /** A number as written: 42, 0x1F, 0b101, 1.5e-3, .5 */
  | 'number'
  /** Proton's interval shorthand `5s`, `10ms`, `1M`: `value` is the integer text, `unit` the suffix. */
  | 'interval'
  /** Punctuation and operators: ( ) [ ] { } , . ; : :: -> + - * / % || = == != <> < > <= >= ? */
  | 'op'
  | 'eof';

export interface Token {
  readonly type: TokenType;
  readonly value: string;
  /** Interval shorthand suffix (case-sensitive): ns us ms s m h d w M q y. */
  readonly unit?: string;
  readonly start: number;
  readonly end: number;
  /** True when whitespace or a comment separates this token from the previous one. */
  readonly spaceBefore: boolean;
}

/** Interval shorthand suffixes and their units (streaming-sql-notes.md §1.5). Case-sensitive. */
export const SHORTHAND_UNITS = {
  ns: 'NANOSECOND',
  us: 'MICROSECOND',
  ms: 'MILLISECOND',
  s: 'SECOND',
  m: 'MINUTE',
  h: 'HOUR',
  d: 'DAY',
  w: 'WEEK',
  M: 'MONTH',
  q: 'QUARTER',
  y: 'YEAR',
} as const;

export type ShorthandSuffix = keyof typeof SHORTHAND_UNITS;

/** Human-readable description of a token for error messages. */
export function describeToken(t: Token, source: string): string {
  if (t.type === 'eof') return 'end of query';
  const text = source.slice(t.start, t.end);
  const shown = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  return `'${shown}'`;
}
