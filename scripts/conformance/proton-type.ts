// Parses the type names of a result header (`datetime64(3, 'UTC')`, `array(nullable(int32))`,
// `tuple(a int32, b string)`, `map(string, float64)`, ...) into a small tree, so that values can be
// rendered the way the original Python driver rendered them. ClickHouse spellings (`Nullable(Int32)`)
// are accepted too and mapped to the Proton names.

export interface ProtonType {
  /** Canonical lowercase Proton name: `int32`, `nullable`, `datetime64`, `low_cardinality`, ... */
  name: string;
  /** Type arguments (element types of arrays, tuples, maps, nullable, ...). */
  types: ProtonType[];
  /** Literal arguments: precision, scale, time zone, fixed_string length, enum entries. */
  literals: Array<string | number>;
  /** Element names of a named tuple, in order (undefined for unnamed elements). */
  fieldNames: Array<string | undefined>;
}

/** Multi-word names whose ClickHouse spelling is CamelCase, keyed by lowercase-without-underscores. */
const SNAKE: Record<string, string> = {
  lowcardinality: 'low_cardinality',
  fixedstring: 'fixed_string',
  aggregatefunction: 'aggregate_function',
  simpleaggregatefunction: 'simple_aggregate_function',
  linestring: 'line_string',
  multilinestring: 'multi_line_string',
  multipolygon: 'multi_polygon',
  boolean: 'bool',
};

function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  const squashed = lower.replace(/_/g, '');
  if (SNAKE[squashed]) return SNAKE[squashed];
  if (squashed.startsWith('interval')) return `interval_${squashed.slice('interval'.length)}`;
  return lower;
}

type Token =
  | { kind: 'ident'; text: string }
  | { kind: 'string'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'punct'; text: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
      out.push({ kind: 'ident', text: text.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(text[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < text.length && /[0-9.]/.test(text[j]!)) j++;
      out.push({ kind: 'number', text: text.slice(i, j) });
      i = j;
    } else if (c === "'" || c === '`' || c === '"') {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j];
        j++;
      }
      out.push(c === "'" ? { kind: 'string', text: s } : { kind: 'ident', text: s });
      i = j + 1;
    } else {
      out.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.pos + offset];
  }

  private isPunct(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.kind === 'punct' && t.text === text;
  }

  parseType(): ProtonType {
    const t = this.peek();
    if (t?.kind !== 'ident') throw new Error('expected a type name');
    this.pos++;
    const node: ProtonType = { name: canonicalName(t.text), types: [], literals: [], fieldNames: [] };
    if (!this.isPunct('(')) return node;
    this.pos++;
    while (this.peek() && !this.isPunct(')')) {
      this.parseArgument(node);
      if (this.isPunct(',')) this.pos++;
      else break;
    }
    if (this.isPunct(')')) this.pos++;
    return node;
  }

  private parseArgument(node: ProtonType): void {
    const t = this.peek();
    if (!t) return;
    if (t.kind === 'string' || t.kind === 'number') {
      this.pos++;
      // enum entry `'a' = 1`: keep the name, skip the value
      if (this.isPunct('=')) {
        this.pos++;
        if (this.peek()?.kind === 'number') this.pos++;
      }
      node.literals.push(t.kind === 'number' ? Number(t.text) : t.text);
      return;
    }
    if (t.kind === 'ident') {
      // named tuple element: `name type`
      const next = this.peek(1);
      if (next?.kind === 'ident' && node.name === 'tuple') {
        this.pos++;
        node.fieldNames.push(t.text);
        node.types.push(this.parseType());
        return;
      }
      node.fieldNames.push(undefined);
      node.types.push(this.parseType());
      return;
    }
    this.pos++;
  }
}

const cache = new Map<string, ProtonType>();

/** Parse a type name; unknown syntax yields a node named after the lowercased text. */
export function parseProtonType(text: string): ProtonType {
  const hit = cache.get(text);
  if (hit) return hit;
  let node: ProtonType;
  try {
    node = new Parser(tokenize(text)).parseType();
  } catch {
    node = { name: text.trim().toLowerCase(), types: [], literals: [], fieldNames: [] };
  }
  cache.set(text, node);
  return node;
}

/** The type with `nullable(...)` and `low_cardinality(...)` wrappers removed. */
export function unwrapType(t: ProtonType): ProtonType {
  let cur = t;
  while ((cur.name === 'nullable' || cur.name === 'low_cardinality') && cur.types[0]) cur = cur.types[0];
  return cur;
}

/** The time zone argument of a datetime type, if it has one. */
export function timeZoneOf(t: ProtonType): string | undefined {
  const tz = t.literals.find((l): l is string => typeof l === 'string');
  return tz && tz.length > 0 ? tz : undefined;
}

/** The scale of a decimal type (`decimal(P, S)`, `decimal32(S)`, ...). */
export function decimalScale(t: ProtonType): number {
  const nums = t.literals.filter((l): l is number => typeof l === 'number');
  if (t.name === 'decimal') return nums[1] ?? 0;
  return nums[0] ?? 0;
}

const INTEGER_NAMES = /^u?int(8|16|32|64|128|256)$/;

export function isIntegerType(t: ProtonType): boolean {
  return INTEGER_NAMES.test(t.name);
}

export function isFloatType(t: ProtonType): boolean {
  return t.name === 'float32' || t.name === 'float64' || t.name === 'bfloat16';
}
