import { SqlSyntaxError } from './syntax-error.ts';
import type { SHORTHAND_UNITS, Token, TokenType } from './tokens.ts';

const OPS3 = ['<=>'];
const OPS2 = ['::', '->', '||', '<=', '>=', '!=', '<>', '=='];
const OPS1 = '()[]{},.;:+-*/%=<>?@^';

const isDigit = (c: number) => c >= 48 && c <= 57;
const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 128;
const isIdentPart = (c: number) => isIdentStart(c) || isDigit(c) || c === 36;

/** Split SQL text into tokens. Ends with one `eof` token. Throws SqlSyntaxError on bad input. */
export function tokenize(source: string): Token[] {
  return new Lexer(source).run();
}

class Lexer {
  private pos = 0;
  private readonly tokens: Token[] = [];
  private space = false;

  constructor(private readonly s: string) {}

  run(): Token[] {
    for (;;) {
      this.skipSpaceAndComments();
      if (this.pos >= this.s.length) {
        this.push('eof', '', this.pos, this.pos);
        return this.tokens;
      }
      this.next();
    }
  }

  private fail(offset: number, detail: string): never {
    throw new SqlSyntaxError(this.s, offset, detail);
  }

  private push(type: TokenType, value: string, start: number, end: number, unit?: string): void {
    this.tokens.push(
      unit === undefined
        ? { type, value, start, end, spaceBefore: this.space }
        : { type, value, unit, start, end, spaceBefore: this.space },
    );
    this.space = false;
  }

  private skipSpaceAndComments(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11) {
        this.pos++;
        this.space = true;
      } else if (c === 45 && s.charCodeAt(this.pos + 1) === 45) {
        const nl = s.indexOf('\n', this.pos);
        this.pos = nl < 0 ? s.length : nl + 1;
        this.space = true;
      } else if (c === 47 && s.charCodeAt(this.pos + 1) === 42) {
        const close = s.indexOf('*/', this.pos + 2);
        if (close < 0) this.fail(this.pos, 'Unterminated comment');
        this.pos = close + 2;
        this.space = true;
      } else {
        return;
      }
    }
  }

  private next(): void {
    const s = this.s;
    const start = this.pos;
    const c = s.charCodeAt(start);
    if (isDigit(c) || (c === 46 && isDigit(s.charCodeAt(start + 1)) && !this.afterOperand())) {
      this.number();
      return;
    }
    if (isIdentStart(c)) {
      let i = start + 1;
      while (i < s.length && isIdentPart(s.charCodeAt(i))) i++;
      this.pos = i;
      this.push('ident', s.slice(start, i), start, i);
      return;
    }
    if (c === 39) {
      this.push('string', this.quoted("'"), start, this.pos);
      return;
    }
    if (c === 96 || c === 34) {
      const q = s[start] as string;
      const name = this.quoted(q);
      if (name === '') this.fail(start, 'Empty quoted identifier');
      this.push('quoted', name, start, this.pos);
      return;
    }
    if (c === 36) {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(s.slice(start, start + 64));
      if (m) {
        const tag = m[0];
        const close = s.indexOf(tag, start + tag.length);
        if (close < 0) this.fail(start, `Unterminated heredoc ${tag}`);
        this.pos = close + tag.length;
        this.push('string', s.slice(start + tag.length, close), start, this.pos);
        return;
      }
    }
    const op = OPS3.find((o) => s.startsWith(o, start)) ?? OPS2.find((o) => s.startsWith(o, start));
    if (op) this.op(op);
    else if (OPS1.includes(s[start] as string)) this.op(s[start] as string);
    else this.fail(start, `Unexpected character '${s[start]}'`);
  }

  private op(text: string): void {
    const start = this.pos;
    this.pos += text.length;
    this.push('op', text, start, this.pos);
  }

  /** True when the previous token ends an operand, so `.5` there is `.` then `5` (`t.1`). */
  private afterOperand(): boolean {
    const prev = this.tokens[this.tokens.length - 1];
    if (!prev || this.space) return false;
    return (
      prev.type === 'ident' ||
      prev.type === 'quoted' ||
      prev.type === 'number' ||
      (prev.type === 'op' && (prev.value === ')' || prev.value === ']'))
    );
  }

  private number(): void {
    const s = this.s;
    const start = this.pos;
    let i = start;
    const lower = s.slice(start, start + 2).toLowerCase();
    if (lower === '0x' && /[0-9a-fA-F]/.test(s[start + 2] ?? '')) {
      i = start + 2;
      while (/[0-9a-fA-F]/.test(s[i] ?? '')) i++;
    } else if (lower === '0b' && /[01]/.test(s[start + 2] ?? '')) {
      i = start + 2;
      while (s[i] === '0' || s[i] === '1') i++;
    } else {
      while (isDigit(s.charCodeAt(i))) i++;
      const intEnd = i;
      // Interval shorthand: an integer directly followed by a unit suffix (case-sensitive).
      const suffix = /^(ns|us|ms|s|m|h|d|w|M|q|y)(?![A-Za-z0-9_$])/.exec(s.slice(intEnd, intEnd + 3));
      if (suffix && intEnd > start && s[start] !== '.') {
        const unit = suffix[1] as keyof typeof SHORTHAND_UNITS;
        this.pos = intEnd + unit.length;
        this.push('interval', s.slice(start, intEnd), start, this.pos, unit);
        return;
      }
      if (s[i] === '.' && !(s[i + 1] === '.')) {
        i++;
        while (isDigit(s.charCodeAt(i))) i++;
      }
      if (
        (s[i] === 'e' || s[i] === 'E') &&
        (isDigit(s.charCodeAt(i + 1)) ||
          ((s[i + 1] === '+' || s[i + 1] === '-') && isDigit(s.charCodeAt(i + 2))))
      ) {
        i += 2;
        while (isDigit(s.charCodeAt(i))) i++;
      }
    }
    if (i < s.length && isIdentPart(s.charCodeAt(i))) {
      let j = i;
      while (j < s.length && isIdentPart(s.charCodeAt(j))) j++;
      // A word of digits, letters and underscores that is not a number (`024_types`): an identifier.
      const word = s.slice(start, j);
      if (/^[0-9]+[A-Za-z0-9_$]*$/.test(word) && word.includes('_') && !/^0[xXbB]/.test(word)) {
        this.pos = j;
        this.push('ident', s.slice(start, j), start, j);
        return;
      }
      this.fail(start, `Malformed number '${s.slice(start, j)}'`);
    }
    this.pos = i;
    this.push('number', s.slice(start, i), start, i);
  }

  /** Read a quoted string or identifier starting at `this.pos`; returns the decoded text. */
  private quoted(q: string): string {
    const s = this.s;
    const start = this.pos;
    let i = start + 1;
    let out = '';
    for (;;) {
      if (i >= s.length)
        this.fail(start, q === "'" ? 'Unterminated string literal' : 'Unterminated quoted identifier');
      const ch = s[i] as string;
      if (ch === q) {
        if (s[i + 1] === q) {
          out += q;
          i += 2;
          continue;
        }
        this.pos = i + 1;
        return out;
      }
      if (ch === '\\' && i + 1 < s.length) {
        const e = s[i + 1] as string;
        i += 2;
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case '0':
            out += '\0';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'a':
            out += '\x07';
            break;
          case 'v':
            out += '\v';
            break;
          case 'e':
            out += '\x1b';
            break;
          case 'x': {
            const hex = s.slice(i, i + 2);
            if (/^[0-9a-fA-F]{2}$/.test(hex)) {
              out += String.fromCharCode(Number.parseInt(hex, 16));
              i += 2;
            } else out += 'x';
            break;
          }
          default:
            out += e;
        }
        continue;
      }
      out += ch;
      i++;
    }
  }
}
