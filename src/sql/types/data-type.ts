/**
 * A SQL data type as a small immutable tree: `array(nullable(int32))`, `datetime64(3, 'UTC')`,
 * `tuple(a int32, b string)`, `enum8('a' = 1)`, `decimal(10, 2)`, `aggregate_function(sum, int64)`.
 * Type names are kept as written; `proton-types.ts` maps them between dialects.
 */
export type TypeArg =
  | { readonly kind: 'type'; readonly type: DataType }
  | { readonly kind: 'named'; readonly name: string; readonly type: DataType }
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'enum'; readonly label: string; readonly value: string }
  | { readonly kind: 'ident'; readonly name: string };

export interface DataType {
  readonly name: string;
  readonly args: readonly TypeArg[];
  /** True when written with parentheses, even empty ones: `tuple()`. */
  readonly parens: boolean;
}

export class TypeSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TypeSyntaxError';
  }
}

/** Parse a type written in either dialect. Throws TypeSyntaxError with the offset of the problem. */
export function parseDataType(text: string): DataType {
  const p = new TypeParser(text);
  const t = p.type();
  p.skipSpace();
  if (!p.atEnd()) throw new TypeSyntaxError(`unexpected "${text.slice(p.pos)}" after type`, p.pos);
  return t;
}

class TypeParser {
  pos = 0;
  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.pos >= this.s.length;
  }

  skipSpace(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos] ?? '')) this.pos++;
  }

  private peek(): string {
    this.skipSpace();
    return this.s[this.pos] ?? '';
  }

  private ident(): string {
    this.skipSpace();
    const m = /^(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`\\]|\\.)*`)/.exec(this.s.slice(this.pos));
    if (!m) throw new TypeSyntaxError('expected a type name', this.pos);
    this.pos += m[0].length;
    return m[0].startsWith('`') ? m[0].slice(1, -1).replace(/\\(.)/g, '$1') : m[0];
  }

  private stringLiteral(): string {
    const quote = this.s[this.pos];
    let i = this.pos + 1;
    let out = '';
    while (i < this.s.length && this.s[i] !== quote) {
      if (this.s[i] === '\\' && i + 1 < this.s.length) {
        out += this.s[i + 1];
        i += 2;
      } else {
        out += this.s[i];
        i++;
      }
    }
    if (i >= this.s.length) throw new TypeSyntaxError('unterminated string in type', this.pos);
    this.pos = i + 1;
    return out;
  }

  type(): DataType {
    const name = this.ident();
    if (this.peek() !== '(') return { name, args: [], parens: false };
    this.pos++;
    const args: TypeArg[] = [];
    if (this.peek() === ')') {
      this.pos++;
      return { name, args, parens: true };
    }
    for (;;) {
      args.push(this.arg());
      const c = this.peek();
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ')') {
        this.pos++;
        return { name, args, parens: true };
      }
      throw new TypeSyntaxError(`expected "," or ")" in the arguments of ${name}`, this.pos);
    }
  }

  private arg(): TypeArg {
    const c = this.peek();
    if (c === "'" || c === '"') {
      const label = this.stringLiteral();
      if (this.peek() === '=') {
        this.pos++;
        this.skipSpace();
        const m = /^[-+]?\d+/.exec(this.s.slice(this.pos));
        if (!m) throw new TypeSyntaxError('expected a number after "=" in an enum', this.pos);
        this.pos += m[0].length;
        return { kind: 'enum', label, value: m[0] };
      }
      return { kind: 'string', value: label };
    }
    if (/[-+0-9.]/.test(c)) {
      const m = /^[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+)/.exec(this.s.slice(this.pos));
      if (!m) throw new TypeSyntaxError('expected a number', this.pos);
      this.pos += m[0].length;
      return { kind: 'number', text: m[0] };
    }
    const start = this.pos;
    const first = this.type();
    // `name type` inside tuple(...) / nested(...): an identifier followed by another type.
    if (!first.parens && /[A-Za-z_`]/.test(this.peek())) {
      const type = this.type();
      return { kind: 'named', name: first.name, type };
    }
    if (!first.parens && this.peek() !== ',' && this.peek() !== ')') {
      throw new TypeSyntaxError('unexpected character in type arguments', this.pos);
    }
    void start;
    return { kind: 'type', type: first };
  }
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function printArg(a: TypeArg, rename: (name: string) => string): string {
  switch (a.kind) {
    case 'type':
      return printDataType(a.type, rename);
    case 'named':
      return `${a.name} ${printDataType(a.type, rename)}`;
    case 'number':
      return a.text;
    case 'string':
      return quote(a.value);
    case 'enum':
      return `${quote(a.label)} = ${a.value}`;
    case 'ident':
      return a.name;
  }
}

/** Print a type tree, naming each type through `rename`. */
export function printDataType(t: DataType, rename: (name: string) => string = (n) => n): string {
  const name = rename(t.name);
  if (!t.parens) return name;
  return `${name}(${t.args.map((a) => printArg(a, rename)).join(', ')})`;
}
