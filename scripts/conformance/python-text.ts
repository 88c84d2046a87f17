// Renders values as the original Python runner saw them. That runner read rows through the Python
// driver and turned every field into text with `str()` (so a datetime became `2020-02-02 20:00:00`,
// a tz-aware one `2020-02-02 20:00:00+00:00`, a list `[1, 2]`, a tuple `(1, 'a')`, a map
// `{'a': 1}`, a bool `True`), and the expected values of the cases are written in that text.
// Here the actual values come from Tributary's JSON (numbers as lossless-json LosslessNumber) and
// are rendered by their column type; expected values (from JSON/YAML case files) by their own kind.

import { isLosslessNumber } from 'lossless-json';
import {
  decimalScale,
  isFloatType,
  isIntegerType,
  type ProtonType,
  parseProtonType,
  timeZoneOf,
  unwrapType,
} from './proton-type.ts';
import { zoneOffsetMs } from './zone-offset.ts';

// ---------------------------------------------------------------- numbers

/** Python's repr() of a float: shortest round-trip digits, `1.0`, `1e+16`, `1.5e-05`, `nan`, `inf`. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant = '', expText = '0'] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  // Python switches to exponent form below 1e-4 and from 1e16 on
  if (exp < -4 || exp >= 16) return sign + fmtExp(digits, exp);
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intLen = exp + 1;
  if (digits.length <= intLen) return `${sign}${digits}${'0'.repeat(intLen - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

function fmtExp(digits: string, exp: number): string {
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp);
  return `${mant}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
}

/** The text of a JSON number (lossless), a JS number, or a numeric string. */
function numericText(v: unknown): string | undefined {
  if (isLosslessNumber(v)) return v.value;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return v.trim();
  return undefined;
}

/** A float value from the wire (`"nan"`, `"inf"` and `"-inf"` arrive as strings). */
export function floatFromWire(v: unknown): number {
  if (v === null || v === undefined) return Number.NaN;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const text = numericText(v);
  if (text === undefined) return Number.NaN;
  const parsed = pyFloatParse(text);
  return parsed ?? Number.NaN;
}

/** Python's float(str): accepts `1.5`, ` 1e5 `, `1_000.5`, `nan`, `inf`, `-Infinity`; else undefined. */
export function pyFloatParse(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (/^[+-]?(nan)$/.test(t)) return Number.NaN;
  if (/^[+-]?(inf|infinity)$/.test(t))
    return t.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (!/^[+-]?(\d(_?\d)*)?(\.(\d(_?\d)*)?)?(e[+-]?\d(_?\d)*)?$/.test(t) || !/\d/.test(t.split('e')[0] ?? ''))
    return undefined;
  return Number(t.replace(/_/g, ''));
}

/** Python's int(x) for a value from a case file or the wire; undefined when Python would raise. */
export function pyIntParse(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt(Math.trunc(v)) : undefined;
  if (isLosslessNumber(v))
    return pyIntParse(v.value.includes('.') || /e/i.test(v.value) ? Number(v.value) : v.value);
  if (typeof v === 'string') {
    const t = v.trim();
    if (!/^[+-]?\d(_?\d)*$/.test(t)) return undefined;
    return BigInt(t.replace(/_/g, '').replace(/^\+/, ''));
  }
  return undefined;
}

/**
 * A decimal as the Python driver made it: `Decimal(raw) / 10**scale`, which Python's decimal module
 * returns with trailing zeros dropped (`1.5`, `2`), in exponent form below 1E-6. `shift` moves the
 * decimal point right: the driver divided only when the scale was above 1 (`if self.scale > 1`), so
 * a scale-1 decimal came out as its raw integer (1.5 as `15`).
 */
export function decimalText(v: unknown, shift = 0): string {
  const text = numericText(v);
  if (text === undefined) return String(v);
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return text;
  const sign = m[1] === '-' ? '-' : '';
  let digits = `${m[2] ?? ''}${m[3] ?? ''}`;
  let exp = -(m[3] ?? '').length + Number(m[4] ?? 0) + shift;
  digits = digits.replace(/^0+(?=\d)/, '');
  if (/^0*$/.test(digits)) return '0';
  // drop trailing zeros while the exponent stays <= 0 (the ideal exponent of the division is 0)
  while (exp < 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exp++;
  }
  if (exp > 0) {
    digits += '0'.repeat(exp);
    exp = 0;
  }
  const adjusted = exp + digits.length - 1;
  if (adjusted >= -6) {
    if (exp === 0) return sign + digits;
    const point = digits.length + exp;
    if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
    return `${sign}0.${'0'.repeat(-point)}${digits}`;
  }
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mant}E${adjusted < 0 ? '-' : '+'}${Math.abs(adjusted)}`;
}

// ---------------------------------------------------------------- strings

/** Python's repr() of a str. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && /[\p{C}\p{Z}]/u.test(ch)) {
      if (cp <= 0xff) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

// ---------------------------------------------------------------- date and time

interface WallTime {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  us: number;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** The UTC offset of `zone` at the instant `ms`, in minutes (0 for a zone Intl does not know). */
function zoneOffsetMinutes(ms: number, zone: string): number {
  try {
    return Math.round(zoneOffsetMs(ms, zone) / 60000);
  } catch {
    return 0;
  }
}

function wallFromInstant(ms: number, us: number, zone: string | undefined): WallTime {
  const shifted = ms + (zone ? zoneOffsetMinutes(ms, zone) : 0) * 60000;
  const d = new Date(shifted);
  return {
    y: d.getUTCFullYear(),
    mo: d.getUTCMonth() + 1,
    d: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
    us,
  };
}

/** Parse a datetime from the wire into the wall time of the column's zone (UTC when it has none). */
function parseWallTime(v: unknown, zone: string | undefined): WallTime | undefined {
  if (typeof v === 'string') {
    const m = DATE_TIME.exec(v.trim());
    if (!m) return undefined;
    const frac = (m[7] ?? '').slice(0, 6).padEnd(6, '0');
    const wall: WallTime = {
      y: Number(m[1]),
      mo: Number(m[2]),
      d: Number(m[3]),
      h: Number(m[4] ?? 0),
      mi: Number(m[5] ?? 0),
      s: Number(m[6] ?? 0),
      us: Number(frac),
    };
    if (!m[8]) return wall;
    // an explicit offset: convert the instant to the column's zone
    const off = m[8].toUpperCase() === 'Z' ? 0 : offsetMinutesOf(m[8]);
    const ms = Date.UTC(wall.y, wall.mo - 1, wall.d, wall.h, wall.mi, wall.s) - off * 60000;
    return wallFromInstant(ms, wall.us, zone);
  }
  const text = numericText(v);
  if (text === undefined) return undefined;
  const secs = Number(text);
  if (!Number.isFinite(secs)) return undefined;
  const whole = Math.floor(secs);
  const us = Math.round((secs - whole) * 1e6);
  return wallFromInstant(whole * 1000, us, zone);
}

function offsetMinutesOf(text: string): number {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(text);
  if (!m) return 0;
  const n = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === '-' ? -n : n;
}

function offsetText(wall: WallTime, zone: string): string {
  const guess = Date.UTC(wall.y, wall.mo - 1, wall.d, wall.h, wall.mi, wall.s);
  const first = zoneOffsetMinutes(guess, zone);
  const off = zoneOffsetMinutes(guess - first * 60000, zone);
  const a = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

function dateTimeStr(wall: WallTime, zone: string | undefined): string {
  const base = `${wall.y}-${pad(wall.mo)}-${pad(wall.d)} ${pad(wall.h)}:${pad(wall.mi)}:${pad(wall.s)}`;
  const frac = wall.us ? `.${pad(wall.us, 6)}` : '';
  return base + frac + (zone ? offsetText(wall, zone) : '');
}

function dateTimeRepr(wall: WallTime, zone: string | undefined): string {
  const parts = [wall.y, wall.mo, wall.d, wall.h, wall.mi];
  if (wall.s || wall.us) parts.push(wall.s);
  if (wall.us) parts.push(wall.us);
  const tz = zone ? `, tzinfo=${zone.toUpperCase() === 'UTC' ? '<UTC>' : `<DstTzInfo '${zone}'>`}` : '';
  return `datetime.datetime(${parts.join(', ')}${tz})`;
}

// ---------------------------------------------------------------- values by column type

function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v === 'true' || v === '1';
  const t = numericText(v);
  return t !== undefined && Number(t) !== 0;
}

function intText(v: unknown): string {
  const n = pyIntParse(v);
  if (n !== undefined) return n.toString();
  return typeof v === 'string' ? v : String(numericText(v) ?? v);
}

function arrayItems(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function tupleItems(v: unknown, t: ProtonType): unknown[] {
  if (Array.isArray(v)) return v;
  if (v && typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    if (t.fieldNames.some((n) => n !== undefined))
      return t.fieldNames.map((n, i) => (n !== undefined && n in obj ? obj[n] : Object.values(obj)[i]));
    return Object.values(obj);
  }
  return [v];
}

function mapEntries(v: unknown): Array<[unknown, unknown]> {
  if (Array.isArray(v)) return v.map((e) => (Array.isArray(e) ? [e[0], e[1]] : [e, undefined]));
  if (v && typeof v === 'object') return Object.entries(v as Record<string, unknown>);
  return [];
}

function render(v: unknown, type: ProtonType, repr: boolean): string {
  if (v === null || v === undefined) return 'None';
  const t = unwrapType(type);
  const name = t.name;
  if (name === 'bool') return truthy(v) ? 'True' : 'False';
  if (isIntegerType(t)) return intText(v);
  if (isFloatType(t)) {
    const f = floatFromWire(v);
    return pyFloatRepr(name === 'float32' ? Math.fround(f) : f);
  }
  if (name.startsWith('decimal')) {
    const s = decimalText(v, decimalScale(t) === 1 ? 1 : 0);
    return repr ? `Decimal('${s}')` : s;
  }
  if (name === 'date' || name === 'date32') {
    const wall = parseWallTime(v, undefined);
    if (!wall) return repr ? pyStrRepr(String(v)) : String(v);
    return repr
      ? `datetime.date(${wall.y}, ${wall.mo}, ${wall.d})`
      : `${wall.y}-${pad(wall.mo)}-${pad(wall.d)}`;
  }
  if (name === 'datetime' || name === 'datetime32' || name === 'datetime64') {
    const zone = timeZoneOf(t);
    const wall = parseWallTime(v, zone);
    if (!wall) return repr ? pyStrRepr(String(v)) : String(v);
    return repr ? dateTimeRepr(wall, zone) : dateTimeStr(wall, zone);
  }
  if (name === 'uuid' || name === 'ipv4' || name === 'ipv6') {
    const s = String(v);
    if (!repr) return s;
    const cls = name === 'uuid' ? 'UUID' : name === 'ipv4' ? 'IPv4Address' : 'IPv6Address';
    return `${cls}('${s}')`;
  }
  if (name === 'array' || name === 'nested') {
    const elem = t.types[0] ?? parseProtonType('string');
    return `[${arrayItems(v)
      .map((x) => render(x, elem, true))
      .join(', ')}]`;
  }
  if (name === 'tuple') {
    const items = tupleItems(v, t).map((x, i) => render(x, t.types[i] ?? parseProtonType('string'), true));
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  if (name === 'map') {
    const kt = t.types[0] ?? parseProtonType('string');
    const vt = t.types[1] ?? parseProtonType('string');
    return `{${mapEntries(v)
      .map(([k, x]) => `${render(k, kt, true)}: ${render(x, vt, true)}`)
      .join(', ')}}`;
  }
  if (typeof v === 'string') {
    const s = name === 'fixed_string' ? v.replace(/\u0000+$/, '') : v;
    return repr ? pyStrRepr(s) : s;
  }
  return pyValueRepr(v);
}

/** Python str() of a field of a result row, by the column's type. */
export function pyStr(value: unknown, type: ProtonType | string): string {
  return render(value, typeof type === 'string' ? parseProtonType(type) : type, false);
}

/** Python repr() of a field of a result row, by the column's type. */
export function pyRepr(value: unknown, type: ProtonType | string): string {
  return render(value, typeof type === 'string' ? parseProtonType(type) : type, true);
}

// ---------------------------------------------------------------- values of case files

/** Python repr() of a plain value (a JSON/YAML value of a case file, or untyped JSON). */
export function pyValueRepr(v: unknown): string {
  if (typeof v === 'string') return pyStrRepr(v);
  return pyValueText(v, true);
}

/** Python str() of a plain value (what the original compared an expected field's text with). */
export function pyValueStr(v: unknown): string {
  if (typeof v === 'string') return v;
  return pyValueText(v, false);
}

function pyValueText(v: unknown, repr: boolean): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : pyFloatRepr(v);
  if (isLosslessNumber(v)) {
    const text = v.value;
    return /^[+-]?\d+$/.test(text) ? text : pyFloatRepr(Number(text));
  }
  if (v instanceof Date) {
    const ms = v.getTime();
    const msPart = ((ms % 1000) + 1000) % 1000;
    const wall = wallFromInstant(ms - msPart, msPart * 1000, undefined);
    return repr ? dateTimeRepr(wall, undefined) : dateTimeStr(wall, undefined);
  }
  if (Array.isArray(v)) return `[${v.map((x) => pyValueRepr(x)).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyStrRepr(k)}: ${pyValueRepr(x)}`)
      .join(', ')}}`;
  }
  return String(v);
}
