import { CLAUSE_WORDS, NON_EXPRESSION_WORDS } from '../syntax/keywords.ts';

/** Words that would not read back as a plain identifier, so names spelled like them are quoted. */
const SPECIAL_WORDS = new Set([
  ...CLAUSE_WORDS,
  ...NON_EXPRESSION_WORDS,
  'NULL',
  'TRUE',
  'FALSE',
  'INF',
  'INFINITY',
  'NAN',
  'CASE',
  'CAST',
  'INTERVAL',
  'NOT',
  'COLUMNS',
  'EXISTS',
  'FILTER',
]);

const SIMPLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An identifier as SQL text: bare when it reads back as the same name, else in backticks. */
export function quoteIdentifier(name: string): string {
  if (SIMPLE.test(name) && !SPECIAL_WORDS.has(name.toUpperCase())) return name;
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/** An identifier always in backticks (for engine SQL, where any name may be a keyword). */
export function backtick(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/** A string literal with ClickHouse escapes. */
export function quoteString(value: string): string {
  let out = "'";
  for (const ch of value) {
    switch (ch) {
      case "'":
        out += "\\'";
        break;
      case '\\':
        out += '\\\\';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\0':
        out += '\\0';
        break;
      default: {
        const code = ch.codePointAt(0) as number;
        out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
      }
    }
  }
  return `${out}'`;
}

/** Line breaks and indentation for pretty output, or single spaces for one-line output. */
export class Layout {
  constructor(
    readonly pretty: boolean,
    readonly depth = 0,
  ) {}

  /** The layout one level deeper. */
  get inner(): Layout {
    return new Layout(this.pretty, this.depth + 1);
  }

  /** A break before a clause at this depth ('\n' + indent, or ' '). */
  get br(): string {
    return this.pretty ? `\n${'  '.repeat(this.depth)}` : ' ';
  }

  /** A break into the clause body (one level deeper), or ' '. */
  get brIn(): string {
    return this.pretty ? `\n${'  '.repeat(this.depth + 1)}` : ' ';
  }

  /** A break with no space in one-line mode (after an opening parenthesis). */
  get brOpen(): string {
    return this.pretty ? `\n${'  '.repeat(this.depth + 1)}` : '';
  }

  /** A break with no space in one-line mode (before a closing parenthesis). */
  get brClose(): string {
    return this.pretty ? `\n${'  '.repeat(this.depth)}` : '';
  }
}
