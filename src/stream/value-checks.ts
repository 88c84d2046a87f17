import { isIPv6 } from 'node:net';
import { type DataType, parseDataType, type TypeArg } from '../sql/types/data-type.ts';

/**
 * Per-type checks of JSON values against a column type, compiled once per stream schema. They accept
 * what the engine's JSON input formats accept for that type (measured, README.md "Validation") so
 * that a request the checks pass is one the engine inserts; a check answers undefined (fine) or the
 * reason the value does not fit.
 *
 * Date-time strings in the common ISO forms are checked here; other spellings the engine may still
 * accept (`Jan 2 2024`) are handed to `doubts` and verified by the engine in one call per request.
 */

export type DoubtKind = 'datetime' | 'date';

export interface DoubtSink {
  add(kind: DoubtKind, value: string): void;
}

export type ValueCheck = (v: unknown, doubts: DoubtSink) => string | undefined;

const INT_TEXT = /^[+-]?\d+$/;
const FLOAT_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const FLOAT_WORD = /^[+-]?(inf|infinity|nan)$/i;
const UUID_TEXT = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const IPV4_TEXT = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const YMD = '\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])';
const DATE_TEXT = new RegExp(`^${YMD}$`);
const DATETIME_TEXT = new RegExp(
  `^${YMD}(?:[T ](?:[01]\\d|2[0-3]):[0-5]\\d(?::(?:[0-5]\\d|60)(?:\\.\\d{1,9})?)?)?(?:Z|[+-]\\d{2}(?::?\\d{2})?)?$`,
);
const LOOKS_DATETIME = /^\d{4}-\d{2}-\d{2}/;

/**
 * Thrown by the checks of 64-bit and wider integer types for a JavaScript number beyond 2^53: the
 * value lost precision in JSON.parse, so the body must be parsed again losslessly.
 */
export class LossyNumber extends Error {
  constructor(readonly value: number) {
    super(`the integer ${value} is beyond 2^53 and lost precision; send it as a string`);
    this.name = 'LossyNumber';
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string')
    return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  return `${typeof v} ${String(v)}`;
}

const INT_BITS: Record<string, [boolean, number]> = {
  Int8: [true, 8],
  Int16: [true, 16],
  Int32: [true, 32],
  Int64: [true, 64],
  Int128: [true, 128],
  Int256: [true, 256],
  UInt8: [false, 8],
  UInt16: [false, 16],
  UInt32: [false, 32],
  UInt64: [false, 64],
  UInt128: [false, 128],
  UInt256: [false, 256],
};

function intCheck(name: string, signed: boolean, bits: number): ValueCheck {
  const min = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  const max = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  const fast = bits <= 32;
  const nmin = Number(min);
  const nmax = Number(max);
  const type = name.toLowerCase();
  const range = () => `out of range for ${type} (${min} to ${max})`;
  return (v) => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) {
        return Number.isFinite(v)
          ? `expected an integer (${type}), got ${describe(v)}`
          : `the number is ${range()}`;
      }
      if (fast || Number.isSafeInteger(v)) return v < nmin || v > nmax ? `${v} is ${range()}` : undefined;
      // Past 2^53 the double is inexact, but one clearly beyond the range is out whatever its digits
      // (nmin/nmax round away from zero, so a value equal to them is decided exactly below).
      if (v < nmin || v > nmax) return `${v} is ${range()}`;
      throw new LossyNumber(v);
    }
    if (typeof v === 'string') {
      if (!INT_TEXT.test(v)) return `expected an integer (${type}), got ${describe(v)}`;
      const b = BigInt(v);
      return b < min || b > max ? `${v} is ${range()}` : undefined;
    }
    return `expected an integer (${type}), got ${describe(v)}`;
  };
}

/**
 * Floats: numbers and numeric strings within the type's range. JSON cannot spell infinity, so a JSON
 * number that is not finite (or past float32's range) was a literal too large for the column, which
 * the engine would store as inf: refused; "inf" as a string stores infinity on purpose.
 */
function floatCheck(type: string, float32: boolean): ValueCheck {
  const expected = `expected a number (or "inf", "-inf", "nan") for ${type}`;
  const tooLarge = (x: number) => !Number.isFinite(float32 ? Math.fround(x) : x);
  return (v) => {
    if (typeof v === 'number') {
      if (!tooLarge(v)) return undefined;
      const n = Number.isFinite(v) ? `${v} ` : 'the number ';
      return `${n}is out of range for ${type} (send "inf" or "-inf" to store an infinity)`;
    }
    if (typeof v === 'string') {
      if (FLOAT_WORD.test(v)) return undefined;
      if (!FLOAT_TEXT.test(v)) return `${expected}, got ${describe(v)}`;
      return tooLarge(Number(v)) ? `${describe(v)} is out of range for ${type}` : undefined;
    }
    return `${expected}, got ${describe(v)}`;
  };
}

function decimalCheck(precision: number, scale: number): ValueCheck {
  const intDigits = precision - scale;
  const limit = 10 ** intDigits;
  return (v) => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `expected a decimal(${precision}, ${scale}), got ${describe(v)}`;
      return Math.abs(v) >= limit
        ? `${v} has more than ${intDigits} digits before the point (decimal(${precision}, ${scale}))`
        : undefined;
    }
    if (typeof v === 'string' && FLOAT_TEXT.test(v)) {
      const mantissa = v.replace(/^[+-]/, '').split(/[eE]/);
      const exp = Number(mantissa[1] ?? 0);
      const whole = (mantissa[0] ?? '').split('.')[0]?.replace(/^0+/, '') ?? '';
      return whole.length + exp > intDigits
        ? `${v} has more than ${intDigits} digits before the point (decimal(${precision}, ${scale}))`
        : undefined;
    }
    return `expected a decimal(${precision}, ${scale}), got ${describe(v)}`;
  };
}

/** Digit strings longer than this are no date or time of any type (int64 has 19 digits). */
const MAX_TIME_DIGITS = 19;

/**
 * Date-times: strings (see above), or whole numbers of seconds (datetime64(p): units of 10^-p s)
 * from 0 up to the type's largest (`max`).
 */
function datetimeCheck(type: string, max: number, maxText = String(max)): ValueCheck {
  return (v, doubts) => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < 0)
        return `expected a date-time string or a whole number of seconds, got ${describe(v)}`;
      return v > max ? `${v} is out of range for ${type} (0 to ${maxText})` : undefined;
    }
    if (typeof v !== 'string') return `expected a date-time string, got ${describe(v)}`;
    if (DATETIME_TEXT.test(v)) return undefined;
    if (/^\d+$/.test(v)) {
      return v.length > MAX_TIME_DIGITS ? `${describe(v)} is out of range for ${type}` : undefined;
    }
    doubts.add('datetime', v);
    return undefined;
  };
}

/** Dates: `YYYY-MM-DD` (and what the engine reads, see above) or day numbers from 0 to `max`. */
function dateCheck(type: string, max: number): ValueCheck {
  return (v, doubts) => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < 0) return `expected a date, got ${describe(v)}`;
      return v > max ? `${v} is out of range for ${type} (day numbers 0 to ${max})` : undefined;
    }
    if (typeof v !== 'string') return `expected a date string (YYYY-MM-DD), got ${describe(v)}`;
    if (DATE_TEXT.test(v)) return undefined;
    if (/^\d+$/.test(v)) {
      return v.length > MAX_TIME_DIGITS ? `${describe(v)} is out of range for ${type}` : undefined;
    }
    if (LOOKS_DATETIME.test(v)) {
      return /^\d{4}-\d{2}-\d{2}$/.test(v)
        ? `${describe(v)} is not a valid date`
        : `expected a date (YYYY-MM-DD) without a time, got ${describe(v)}`;
    }
    doubts.add('date', v);
    return undefined;
  };
}

const boolCheck: ValueCheck = (v) =>
  typeof v === 'boolean' || v === 0 || v === 1
    ? undefined
    : `expected true, false, 0 or 1, got ${describe(v)}`;

/** Strings take strings, numbers and booleans (stored as their JSON text); not objects or arrays. */
const stringCheck: ValueCheck = (v) =>
  typeof v === 'object' && v !== null ? `expected a string, got ${describe(v)}` : undefined;

function fixedStringCheck(n: number): ValueCheck {
  return (v) => {
    if (typeof v !== 'string' && typeof v !== 'number') return `expected a string, got ${describe(v)}`;
    const s = String(v);
    const bytes = s.length <= n / 3 ? s.length : Buffer.byteLength(s);
    return bytes > n ? `the value is ${bytes} bytes long; fixed_string(${n}) holds at most ${n}` : undefined;
  };
}

const uuidCheck: ValueCheck = (v) =>
  typeof v === 'string' && UUID_TEXT.test(v) ? undefined : `expected a UUID, got ${describe(v)}`;
const ipv4Check: ValueCheck = (v) =>
  typeof v === 'string' && IPV4_TEXT.test(v) ? undefined : `expected an IPv4 address, got ${describe(v)}`;
const ipv6Check: ValueCheck = (v) =>
  typeof v === 'string' && (isIPv6(v) || IPV4_TEXT.test(v))
    ? undefined
    : `expected an IPv6 address, got ${describe(v)}`;
const anyCheck: ValueCheck = () => undefined;

function enumCheck(args: readonly TypeArg[]): ValueCheck {
  const labels = new Set<string>();
  const values = new Set<number>();
  for (const a of args) {
    if (a.kind === 'enum') {
      labels.add(a.label);
      values.add(Number(a.value));
    }
  }
  const list = [...labels].map((l) => `'${l}'`).join(', ');
  return (v) => {
    if (typeof v === 'string' && labels.has(v)) return undefined;
    if (typeof v === 'number' && values.has(v)) return undefined;
    return `${describe(v)} is not one of ${list}`;
  };
}

function typeArg(t: DataType, i: number): DataType {
  const a = t.args[i];
  if (a?.kind === 'type') return a.type;
  if (a?.kind === 'named') return a.type;
  return { name: 'String', args: [], parens: false };
}

function numberArg(t: DataType, i: number, fallback: number): number {
  const a = t.args[i];
  return a?.kind === 'number' ? Number(a.text) : fallback;
}

function arrayOf(inner: ValueCheck, what = 'an array'): ValueCheck {
  return (v, doubts) => {
    if (!Array.isArray(v)) return `expected ${what}, got ${describe(v)}`;
    for (let i = 0; i < v.length; i++) {
      const e = inner(v[i], doubts);
      if (e) return `element ${i + 1}: ${e}`;
    }
    return undefined;
  };
}

function nullable(inner: ValueCheck): ValueCheck {
  return (v, doubts) => (v === null ? undefined : inner(v, doubts));
}

const POINT = arrayOf(floatCheck('float64', false), 'a point [x, y]');
const pointCheck: ValueCheck = (v, d) =>
  Array.isArray(v) && v.length !== 2 ? 'expected a point [x, y]' : POINT(v, d);

const DECIMAL_PRECISION: Record<string, number> = {
  Decimal32: 9,
  Decimal64: 18,
  Decimal128: 38,
  Decimal256: 76,
};

/** Compile the check of one type (ClickHouse spelling, as in StreamColumn.engineType). */
export function compileValueCheck(engineType: string): ValueCheck {
  return compile(parseDataType(engineType));
}

function compile(t: DataType): ValueCheck {
  const name = t.name;
  const int = INT_BITS[name];
  if (int) return intCheck(name, int[0], int[1]);
  switch (name) {
    case 'Float32':
    case 'BFloat16':
      return floatCheck(name.toLowerCase(), true);
    case 'Float64':
      return floatCheck('float64', false);
    case 'Decimal':
      return decimalCheck(numberArg(t, 0, 10), numberArg(t, 1, 0));
    case 'Decimal32':
    case 'Decimal64':
    case 'Decimal128':
    case 'Decimal256':
      return decimalCheck(DECIMAL_PRECISION[name] ?? 38, numberArg(t, 0, 0));
    case 'Bool':
      return boolCheck;
    case 'String':
      return stringCheck;
    case 'FixedString':
      return fixedStringCheck(numberArg(t, 0, 1));
    case 'Date':
      return dateCheck('date', 65_535);
    case 'Date32':
      return dateCheck('date32', 120_529);
    case 'DateTime':
    case 'DateTime32':
      return datetimeCheck('datetime', 4_294_967_295);
    case 'DateTime64':
      // Int64 units: the largest double below 2^63 is the largest that fits.
      return datetimeCheck('datetime64', 2 ** 63 - 1024, '2^63 - 1');
    case 'UUID':
      return uuidCheck;
    case 'IPv4':
      return ipv4Check;
    case 'IPv6':
      return ipv6Check;
    case 'Enum':
    case 'Enum8':
    case 'Enum16':
      return enumCheck(t.args);
    case 'Nullable':
      return nullable(compile(typeArg(t, 0)));
    case 'LowCardinality':
      return compile(typeArg(t, 0));
    case 'Array':
      return arrayOf(compile(typeArg(t, 0)));
    case 'Map':
      return mapCheck(compile(typeArg(t, 0)), compile(typeArg(t, 1)));
    case 'Tuple':
      return tupleCheck(t);
    case 'Point':
      return pointCheck;
    case 'Ring':
    case 'LineString':
      return arrayOf(pointCheck, 'an array of points');
    case 'Polygon':
    case 'MultiLineString':
      return arrayOf(arrayOf(pointCheck), 'an array of rings');
    case 'MultiPolygon':
      return arrayOf(arrayOf(arrayOf(pointCheck)), 'an array of polygons');
    default:
      // JSON, Dynamic, Variant, Object, Nested, intervals, aggregate states, Time: the engine decides.
      return anyCheck;
  }
}

function mapCheck(key: ValueCheck, value: ValueCheck): ValueCheck {
  return (v, doubts) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      return `expected an object (map), got ${describe(v)}`;
    for (const [k, x] of Object.entries(v)) {
      const ke = key(k, doubts);
      if (ke) return `key ${JSON.stringify(k)}: ${ke}`;
      const ve = value(x, doubts);
      if (ve) return `key ${JSON.stringify(k)}: ${ve}`;
    }
    return undefined;
  };
}

function tupleCheck(t: DataType): ValueCheck {
  const named = t.args.length > 0 && t.args.every((a) => a.kind === 'named');
  const checks = t.args.map((_, i) => compile(typeArg(t, i)));
  if (named) {
    const byName = new Map<string, ValueCheck>();
    t.args.forEach((a, i) => {
      if (a.kind === 'named') byName.set(a.name, checks[i] as ValueCheck);
    });
    return (v, doubts) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        return `expected an object with fields ${[...byName.keys()].join(', ')}, got ${describe(v)}`;
      }
      for (const [k, x] of Object.entries(v)) {
        const c = byName.get(k);
        if (!c) return `the tuple has no field ${k}`;
        const e = c(x, doubts);
        if (e) return `field ${k}: ${e}`;
      }
      return undefined;
    };
  }
  return (v, doubts) => {
    if (!Array.isArray(v) || v.length !== checks.length)
      return `expected an array of ${checks.length} values, got ${describe(v)}`;
    for (let i = 0; i < checks.length; i++) {
      const e = (checks[i] as ValueCheck)(v[i], doubts);
      if (e) return `element ${i + 1}: ${e}`;
    }
    return undefined;
  };
}
