import type { Span } from '../ast/span.ts';
import { tokenize } from '../syntax/lexer.ts';
import { SqlSyntaxError } from '../syntax/syntax-error.ts';
import { describeToken, type Token } from '../syntax/tokens.ts';

/**
 * A cursor over the tokens of one SQL text, with the bookkeeping for good error messages: every
 * failed check of a keyword or operator at the current position is remembered, so an error can
 * say "Expected one of: FROM, WHERE, ... but found 'x'".
 */
export class TokenCursor {
  readonly tokens: Token[];
  pos = 0;
  /** What would have been accepted, by token offset (kept per offset so backtracking stays accurate). */
  private readonly expected = new Map<number, Set<string>>();

  constructor(readonly source: string) {
    this.tokens = tokenize(source);
  }

  get token(): Token {
    return this.tokens[this.pos] as Token;
  }

  peek(ahead = 1): Token {
    return this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)] as Token;
  }

  /** The token before the current one (the last consumed). */
  get previous(): Token {
    return this.tokens[Math.max(this.pos - 1, 0)] as Token;
  }

  atEnd(): boolean {
    return this.token.type === 'eof';
  }

  advance(): Token {
    const t = this.token;
    if (t.type !== 'eof') this.pos++;
    return t;
  }

  /** Remember that `what` would have been accepted at the current position. */
  expect(what: string): void {
    const at = this.token.start;
    let set = this.expected.get(at);
    if (!set) {
      set = new Set();
      this.expected.set(at, set);
    }
    set.add(what);
  }

  // --- keywords ---

  /** Is token `t` the keyword `kw` (one word, case-insensitive)? */
  static isWord(t: Token, kw: string): boolean {
    return t.type === 'ident' && t.value.length === kw.length && t.value.toUpperCase() === kw;
  }

  /** Does the text continue with the keyword sequence `kws` (e.g. 'ORDER BY')? Records the expectation. */
  isKeyword(kws: string): boolean {
    const words = splitWords(kws);
    for (let i = 0; i < words.length; i++) {
      if (!TokenCursor.isWord(this.peek(i), words[i] as string)) {
        this.expect(kws);
        return false;
      }
    }
    return true;
  }

  /** Consume the keyword sequence if present. */
  acceptKeyword(kws: string): boolean {
    if (!this.isKeyword(kws)) return false;
    this.pos += splitWords(kws).length;
    return true;
  }

  /** Consume the first of `options` present; returns it or undefined. */
  acceptAnyKeyword<T extends string>(...options: T[]): T | undefined {
    for (const o of options) if (this.acceptKeyword(o)) return o;
    return undefined;
  }

  expectKeyword(kws: string): Token {
    const t = this.token;
    if (!this.acceptKeyword(kws)) this.fail();
    return t;
  }

  // --- operators ---

  isOp(op: string): boolean {
    const t = this.token;
    if (t.type === 'op' && t.value === op) return true;
    this.expect(`'${op}'`);
    return false;
  }

  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.pos++;
    return true;
  }

  expectOp(op: string): Token {
    const t = this.token;
    if (!this.acceptOp(op)) this.fail();
    return t;
  }

  // --- spans and errors ---

  /** The span from `start` (an offset) to the end of the last consumed token. */
  spanFrom(start: number): Span {
    return { start, end: Math.max(this.previous.end, start) };
  }

  /** Throw a syntax error at the current token, listing what was expected there. */
  fail(detail?: string): never {
    const t = this.token;
    const found = describeToken(t, this.source);
    if (detail) throw new SqlSyntaxError(this.source, t.start, detail, [], found);
    const expected = summarise([...(this.expected.get(t.start) ?? [])]);
    const text =
      expected.length === 0
        ? `Unexpected ${found}`
        : expected.length === 1
          ? `Expected ${expected[0]} but found ${found}`
          : `Expected one of: ${expected.join(', ')} but found ${found}`;
    throw new SqlSyntaxError(this.source, t.start, text, expected, found);
  }

  /** Throw a syntax error with `detail` at `offset`. */
  failAt(offset: number, detail: string): never {
    throw new SqlSyntaxError(this.source, offset, detail);
  }
}

/** Expectations that only say "an operator could continue the expression here". */
const OPERATORS = new Set([
  "'*'",
  "'/'",
  "'%'",
  'MOD',
  'DIV',
  "'+'",
  "'-'",
  "'||'",
  'operator',
  'LIKE',
  'ILIKE',
  'NOT LIKE',
  'NOT ILIKE',
  'IN',
  'NOT IN',
  'GLOBAL IN',
  'GLOBAL NOT IN',
  'NOT BETWEEN',
  'BETWEEN',
  'IS',
  'AND',
  'OR',
  "'?'",
]);

/** Fold the many operator expectations into one "operator" entry, listed last. */
function summarise(expected: string[]): string[] {
  const rest = expected.filter((e) => !OPERATORS.has(e));
  return rest.length < expected.length ? [...rest, 'operator'] : rest;
}

const WORDS = new Map<string, readonly string[]>();

/** 'ORDER BY' -> ['ORDER', 'BY'], cached (keyword checks are the parser's hottest path). */
function splitWords(kws: string): readonly string[] {
  let words = WORDS.get(kws);
  if (!words) {
    words = kws.split(' ');
    WORDS.set(kws, words);
  }
  return words;
}
