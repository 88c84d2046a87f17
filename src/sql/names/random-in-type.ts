import type { Expr, FunctionCall } from '../ast/expression.ts';
import { parseDataType } from '../types/data-type.ts';
import { toClickHouseType } from '../types/proton-types.ts';

/**
 * Proton's `random_in_type(type [, max] [, generator])` as engine calls: a random value of `type`
 * (below `max` when given: integers in [0, max), dates up to `max` days after the epoch, strings
 * shorter than `max`), passed through the lambda `generator` when given (the max and the lambda may
 * come in either order, as Proton takes them). Each call draws from its own `rand64(k)` (the seed
 * argument `k` is the call's position, so two calls in one SELECT are not merged into one value by
 * the engine's common-subexpression elimination).
 */
export function mapRandomInType(c: FunctionCall): FunctionCall | undefined {
  const [typeArg, second, third] = c.args;
  if (typeArg?.kind !== 'String' || c.args.length > 3) return undefined;
  let max: Expr | undefined;
  let lambda: Expr | undefined;
  for (const a of [second, third]) {
    if (a === undefined) continue;
    if (a.kind === 'Lambda') lambda = a;
    else max = a;
  }
  let engineType: string;
  try {
    engineType = toClickHouseType(typeArg.value);
  } catch {
    return undefined; // an unknown type: the engine's CAST names it
  }
  const b = new CallBuilder(c);
  const value = b.valueOf(engineType, max);
  if (!value) return undefined;
  if (!lambda) return value;
  return b.call('arrayElement', [b.call('arrayMap', [lambda, b.call('array', [value])]), b.num('1')]);
}

const INT_BYTES: Record<string, number> = {
  Int8: 1,
  UInt8: 1,
  Int16: 2,
  UInt16: 2,
  Int32: 4,
  UInt32: 4,
  Int64: 8,
  UInt64: 8,
  Int128: 16,
  UInt128: 16,
  Int256: 32,
  UInt256: 32,
};

/** Largest decimal precision of the DecimalNN(S) spellings. */
const DECIMAL_PRECISION: Record<string, number> = {
  Decimal32: 9,
  Decimal64: 18,
  Decimal128: 38,
  Decimal256: 76,
};

class CallBuilder {
  private seed = 0;
  constructor(private readonly at: FunctionCall) {}

  call(name: string, args: readonly Expr[]): FunctionCall {
    return { kind: 'Function', name, args, distinct: false, span: this.at.span };
  }
  num(text: string): Expr {
    return { kind: 'Number', text, span: this.at.span };
  }
  str(value: string): Expr {
    return { kind: 'String', value, span: this.at.span };
  }
  /** A seed argument of its own (the engine ignores its value). */
  private nextSeed(): Expr {
    this.seed += 1;
    return this.num(String(this.at.span.start * 16 + this.seed));
  }
  /** A fresh uint64 draw. */
  rand(): FunctionCall {
    return this.call('rand64', [this.nextSeed()]);
  }
  /** `n` fresh random bytes. */
  bytes(n: number): FunctionCall {
    return this.call('randomString', [this.num(String(n)), this.nextSeed()]);
  }
  cast(e: Expr, type: string): FunctionCall {
    return this.call('CAST', [e, this.str(type)]);
  }
  /** A draw in [0, bound). */
  below(bound: Expr): FunctionCall {
    return this.call('modulo', [this.rand(), bound]);
  }

  valueOf(engineType: string, max: Expr | undefined): FunctionCall | undefined {
    const t = parseDataType(engineType);
    const bytes = INT_BYTES[t.name];
    if (bytes !== undefined) {
      if (max) return this.cast(this.below(max), engineType);
      const signed = !t.name.startsWith('U');
      // As Proton: a value from 0 to the type's largest (never negative for signed types).
      if (bytes <= 8) {
        const span = signed ? (1n << BigInt(bytes * 8 - 1)).toString() : undefined;
        return this.cast(span ? this.below(this.num(span)) : this.rand(), engineType);
      }
      const unsigned = this.call(`reinterpretAsU${t.name.replace(/^U/, '')}`, [this.bytes(bytes)]);
      return signed ? this.cast(this.call('bitShiftRight', [unsigned, this.num('1')]), engineType) : unsigned;
    }
    switch (t.name) {
      case 'Bool':
        return this.call('toBool', [this.below(this.num('2'))]);
      case 'Float32':
      case 'Float64': {
        const draw = max
          ? this.call('multiply', [this.call('randCanonical', [this.nextSeed()]), max])
          : this.call('toFloat64', [this.call('reinterpretAsInt64', [this.bytes(8)])]);
        return this.cast(draw, engineType);
      }
      case 'Decimal':
      case 'Decimal32':
      case 'Decimal64':
      case 'Decimal128':
      case 'Decimal256': {
        const nums = t.args.map((a) => (a.kind === 'number' ? Number(a.text) : Number.NaN));
        const precision = t.name === 'Decimal' ? (nums[0] ?? 10) : (DECIMAL_PRECISION[t.name] ?? 18);
        const scale = t.name === 'Decimal' ? (nums[1] ?? 0) : (nums[0] ?? 0);
        const bound = max ?? this.num(`1e${Math.max(0, precision - scale)}`);
        return this.cast(this.call('randUniform', [this.num('0'), bound]), engineType);
      }
      case 'String':
        return this.call('randomPrintableASCII', [this.below(max ?? this.num('21'))]);
      case 'FixedString': {
        const n = t.args[0]?.kind === 'number' ? t.args[0].text : '1';
        return this.call('toFixedString', [this.call('randomPrintableASCII', [this.num(n)]), this.num(n)]);
      }
      case 'Date':
        return this.call('toDate', [this.below(max ?? this.num('65536'))]);
      case 'Date32':
        return this.call('addDays', [
          this.call('toDate32', [this.str('1970-01-01')]),
          this.below(max ?? this.num('65536')),
        ]);
      case 'DateTime':
      case 'DateTime32':
        return this.cast(this.below(max ?? this.num('4294967296')), engineType);
      case 'DateTime64': {
        const scale = t.args[0]?.kind === 'number' ? Number(t.args[0].text) : 3;
        const bound = max ?? this.num(String(BigInt(4294967296) * 10n ** BigInt(scale)));
        return this.call('reinterpret', [this.call('toInt64', [this.below(bound)]), this.str(engineType)]);
      }
      case 'UUID':
        return this.call('generateUUIDv4', [this.nextSeed()]);
      case 'IPv4':
        return this.call('toIPv4', [this.call('toUInt32', [this.below(max ?? this.num('4294967296'))])]);
      case 'IPv6':
        return this.cast(this.call('toFixedString', [this.bytes(16), this.num('16')]), 'IPv6');
      default:
        return undefined;
    }
  }
}
