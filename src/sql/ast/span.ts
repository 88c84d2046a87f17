/**
 * Source positions. Every AST node carries the half-open character range `[start, end)` of the
 * text it was parsed from (offsets into the original SQL string, in UTF-16 code units, as
 * `String.prototype.slice` counts them). Line and column are derived on demand.
 */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A span that covers nothing, for nodes built by code rather than parsed. */
export const NO_SPAN: Span = Object.freeze({ start: 0, end: 0 });

export interface LineColumn {
  /** 1-based line number. */
  readonly line: number;
  /** 1-based column number (in UTF-16 code units from the start of the line). */
  readonly column: number;
}

/** The 1-based line and column of `offset` in `text`. Lines end at `\n` (a preceding `\r` is part of the line). */
export function lineColumn(text: string, offset: number): LineColumn {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** The span from the start of `a` to the end of `b`. */
export function spanOf(a: Span, b: Span): Span {
  return { start: a.start, end: b.end };
}
