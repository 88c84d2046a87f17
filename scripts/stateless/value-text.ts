// A result value (as Tributary's query events carry it: JSON, read losslessly) turned back into the
// engine's text form, by the column's type: what ClickHouse/Proton print in TabSeparated.
// - top level: strings escaped (`\t`, `\n`, `\\`, `\'`, `\0`, `\b`, `\f`, `\r`), NULL as `\N`;
// - inside arrays, tuples and maps: strings, dates, UUIDs, enums, IPs quoted (`'a\'b'`), NULL as
//   `NULL`, numbers and bools bare; arrays `[1,2]`, tuples `(1,'a')`, maps `{'k':1}`, no spaces;
// - numbers exactly as the engine wrote them in JSON (which is its text form: `58.3`, `1e20`,
//   `nan`/`inf` as strings); bool `true`/`false`;
// - a datetime whose type names a time zone ends in that zone's offset, as Proton prints it:
//   `2000-01-02 03:00:00Z` in UTC, `1970-01-01 03:00:00+03:00` in Europe/Moscow.

import { isLosslessNumber } from 'lossless-json';
import { type ProtonType, parseProtonType, timeZoneOf } from '../conformance/proton-type.ts';
import { zoneOffsetMs } from '../conformance/zone-offset.ts';

const NUMERIC = /^(u?int(8|16|32|64|128|256)|float(32|64)|bfloat16|decimal(32|64|128|256)?|interval_\w+)$/;

/** Composite geo types: what they are made of. */
const GEO: Record<string, string> = {
  point: 'tuple(float64, float64)',
  ring: 'array(tuple(float64, float64))',
  line_string: 'array(tuple(float64, float64))',
  polygon: 'array(array(tuple(float64, float64)))',
  multi_line_string: 'array(array(tuple(float64, float64)))',
  multi_polygon: 'array(array(array(tuple(float64, float64))))',
};

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\t': '\\t',
  '\n': '\\n',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\r': '\\r',
};

/** The engine's escaping of a string in TabSeparated and inside quotes. */
export function escapeText(s: string): string {
  return s.replace(/[\\'\t\n\0\b\f\r]/g, (c) => ESCAPES[c] ?? c);
}

export function isNumericType(t: ProtonType): boolean {
  return NUMERIC.test(t.name);
}

function unwrap(t: ProtonType): ProtonType {
  let cur = t;
  for (;;) {
    if ((cur.name === 'nullable' || cur.name === 'low_cardinality') && cur.types[0]) cur = cur.types[0];
    else if (GEO[cur.name]) cur = parseProtonType(GEO[cur.name]!);
    else return cur;
  }
}

/** A scalar's bare text (numbers as written, strings as they are). */
function scalarText(v: unknown): string {
  if (isLosslessNumber(v)) return v.toString();
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null || v === undefined) return 'NULL';
  return JSON.stringify(v);
}

/** `Z`, or `+05:30`: the offset of the zone at the wall-clock time `value` (empty if unreadable). */
export function zoneSuffix(value: string, zone: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)/.exec(value);
  if (!m) return '';
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  let offset: number;
  try {
    offset = zoneOffsetMs(wall - zoneOffsetMs(wall, zone), zone);
  } catch {
    return '';
  }
  if (offset === 0) return 'Z';
  const minutes = Math.round(Math.abs(offset) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${offset < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** A datetime's text, with the zone's offset when its type names a zone. */
function datetimeText(t: ProtonType, v: unknown): string {
  const s = scalarText(v);
  const zone = timeZoneOf(t);
  return zone ? `${s}${zoneSuffix(s, zone)}` : s;
}

const isDateTime = (t: ProtonType) => t.name === 'datetime' || t.name === 'datetime64';

const UNKNOWN: ProtonType = { name: '', types: [], literals: [], fieldNames: [] };

/** Text of a value inside a composite (quoted strings, `NULL`). */
function innerText(type: ProtonType, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  const t = unwrap(type);
  if (t.name === 'array' || (Array.isArray(v) && t.name !== 'tuple' && t.name !== 'map' && t.name !== '')) {
    if (!Array.isArray(v)) return scalarText(v);
    const el = t.name === 'array' ? (t.types[0] ?? UNKNOWN) : UNKNOWN;
    return `[${v.map((x) => innerText(el, x)).join(',')}]`;
  }
  if (t.name === 'tuple') return tupleText(t, v);
  if (t.name === 'map') return mapText(t, v);
  if (t.name === '') return untypedText(v);
  if (t.name === 'bool') return boolText(v);
  if (isNumericType(t)) return scalarText(v);
  if (isDateTime(t)) return `'${datetimeText(t, v)}'`;
  return `'${escapeText(scalarText(v))}'`;
}

function boolText(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const s = scalarText(v);
  return s === '0' ? 'false' : s === '1' ? 'true' : s;
}

function tupleText(t: ProtonType, v: unknown): string {
  const items = Array.isArray(v)
    ? v
    : v !== null && typeof v === 'object'
      ? Object.values(v as Record<string, unknown>)
      : [v];
  return `(${items.map((x, i) => innerText(t.types[i] ?? UNKNOWN, x)).join(',')})`;
}

function mapText(t: ProtonType, v: unknown): string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return untypedText(v);
  const [kt, vt] = [t.types[0] ?? UNKNOWN, t.types[1] ?? UNKNOWN];
  const keyText = (k: string) =>
    isNumericType(unwrap(kt)) || unwrap(kt).name === 'bool' ? k : innerText(kt, k);
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${keyText(k)}:${innerText(vt, x)}`)
    .join(',')}}`;
}

/** A value whose type is unknown: by its JSON kind. */
function untypedText(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(untypedText).join(',')}]`;
  if (typeof v === 'string') return `'${escapeText(v)}'`;
  if (v !== null && typeof v === 'object' && !isLosslessNumber(v)) {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `'${escapeText(k)}':${untypedText(x)}`)
      .join(',')}}`;
  }
  return scalarText(v);
}

/** A column value as TabSeparated prints it. */
export function tsvValue(typeName: string, v: unknown, raw = false): string {
  if (v === null || v === undefined) return '\\N';
  const t = unwrap(parseProtonType(typeName));
  if (t.name === 'array' || t.name === 'tuple' || t.name === 'map') return innerText(t, v);
  if (Array.isArray(v) || (typeof v === 'object' && !isLosslessNumber(v))) return innerText(t, v);
  if (t.name === 'bool') return boolText(v);
  if (isDateTime(t)) return datetimeText(t, v);
  const s = scalarText(v);
  return raw ? s : escapeText(s);
}

/** A column value as CSV prints it (strings and composites double-quoted, tuples as several fields). */
export function csvValue(typeName: string, v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  const t = unwrap(parseProtonType(typeName));
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  if (t.name === 'tuple') {
    const items = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    return items.map((x, i) => csvValue(typeText(t.types[i]), x)).join(',');
  }
  if (t.name === 'array' || t.name === 'map') return quote(innerText(t, v));
  if (t.name === 'bool') return boolText(v);
  if (isNumericType(t)) return scalarText(v);
  if (isDateTime(t)) return quote(datetimeText(t, v));
  return quote(scalarText(v));
}

/** A type node back to text (enough to recurse into element types). */
export function typeText(t: ProtonType | undefined): string {
  if (!t) return 'string';
  if (t.types.length === 0) return t.name;
  return `${t.name}(${t.types.map(typeText).join(', ')})`;
}
