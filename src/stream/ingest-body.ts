import { parse as losslessParse } from 'lossless-json';
import { err } from '../errors/tributary-error.ts';
import { bindable } from './fast-bind.ts';
import type { IngestFormat } from './ingest-format.ts';

/**
 * Parse an ingest body into rows with V8's JSON.parse. Integers beyond a double's exact range
 * (> 2^53) lose precision there; the value checks notice (LossyNumber) and the body is parsed again
 * losslessly (`lossless()`), those integers then arriving as decimal strings, which the checks and
 * the engine read exactly.
 *
 * When the body is UTF-8 and in its canonical shape, `passthrough` is the part of the request's own
 * bytes the engine can read directly (JSONCompactEachRow rows, or JSONEachRow objects), so ingest
 * never re-serialises them; otherwise the rows are re-encoded (see ingest-batch.ts).
 */
export type ParsedRows = (
  | { kind: 'compact'; columns: string[]; rows: unknown[][] }
  | { kind: 'objects'; objects: unknown[] }
) & {
  passthrough?: Buffer;
  /** The same body parsed losslessly (absent when it already was, or for in-process rows). */
  lossless?: () => ParsedRows;
};

const BLANK_LINE = /\n[ \t\r]*\n/;

function malformed(detail: string): never {
  throw err('INGEST_MALFORMED', { detail });
}

/**
 * A number of the lossless parse: integers a double cannot hold exactly become their exact decimal
 * digits (also when spelled with an exponent or a fraction, `1e19`, `1.5e20`), everything else a number.
 */
export function parseNumber(s: string): unknown {
  if (/^-?\d{16,}$/.test(s)) return s;
  const n = Number(s);
  if (Number.isSafeInteger(n) || !Number.isInteger(n)) return n;
  return exactInteger(s) ?? n;
}

/** The exact digits of a JSON number that is an integer (`1.18e21` -> `1180000000000000000000`). */
function exactInteger(s: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m) return undefined;
  const [, sign = '', whole = '', fraction = '', exp = '0'] = m;
  const e = Number(exp);
  if (e > 400) return undefined; // beyond any double (Number(s) was not finite then anyway)
  const digits = whole + fraction;
  const point = whole.length + e; // digits before the decimal point
  if (point < 0 || /[^0]/.test(digits.slice(Math.max(point, 0)))) return undefined;
  const intDigits = (
    point >= digits.length ? digits + '0'.repeat(point - digits.length) : digits.slice(0, point)
  ).replace(/^0+(?=\d)/, '');
  return `${sign}${intDigits}`;
}

/** JSON.parse, or the lossless parse when `lossless`; errors become INGEST_MALFORMED. */
function parseJson(text: string, lossless: boolean, where = ''): unknown {
  try {
    return lossless ? losslessParse(text, null, parseNumber) : JSON.parse(text);
  } catch (e) {
    malformed(`${where}${e instanceof Error ? e.message : String(e)}`);
  }
}

function decode(body: Buffer, charset: string): { text: string; utf8: boolean; offset: number } {
  const utf8 = charset === 'utf-8' || charset === 'utf8' || charset === 'us-ascii' || charset === 'ascii';
  if (utf8) {
    const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
    return { text: body.toString('utf8', bom ? 3 : 0), utf8: true, offset: bom ? 3 : 0 };
  }
  const text = new TextDecoder(charset).decode(body);
  return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, utf8: false, offset: 0 };
}

const isWs = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The request's bytes `[start, end)` for the engine, trimmed. A blank line ends an insert's data in
 * the engine (the rest would be silently lost), so when the body has one, a copy with whitespace
 * runs of several newlines collapsed is answered (raw newlines only occur between JSON tokens).
 */
function cleanSlice(body: Buffer, start: number, end: number, blankLines: boolean): Buffer {
  let s = start;
  let e = end;
  while (s < e && isWs(body[s])) s++;
  while (e > s && isWs(body[e - 1])) e--;
  const slice = body.subarray(s, e);
  if (!blankLines) return slice;
  return Buffer.from(slice.toString('utf8').replace(/\n\s*\n/g, '\n'));
}

function hasBlankLine(text: string): boolean {
  return text.includes('\n') && BLANK_LINE.test(text);
}

/** Offset just past the JSON string starting at `i` (a `"`), or -1. */
function skipString(b: Buffer, i: number): number {
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j];
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** Offset just past the array or object starting at `i`, or -1. */
function skipComposite(b: Buffer, i: number): number {
  let depth = 0;
  for (let j = i; j < b.length; j++) {
    const c = b[j];
    if (c === 0x22) {
      j = skipString(b, j) - 1;
      if (j < 0) return -1;
    } else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

function skipWs(b: Buffer, i: number): number {
  let j = i;
  while (j < b.length && isWs(b[j])) j++;
  return j;
}

function expectKey(b: Buffer, i: number, key: string): number {
  const j = skipWs(b, i);
  // Compared byte by byte (the keys are ASCII): no string made per request.
  if (b[j] !== 0x22 || b[j + key.length + 1] !== 0x22) return -1;
  for (let k = 0; k < key.length; k++) if (b[j + 1 + k] !== key.charCodeAt(k)) return -1;
  const k = skipWs(b, j + key.length + 2);
  return b[k] === 0x3a ? skipWs(b, k + 1) : -1;
}

/** Bytes of the rows inside `"data": [ ... ]` of `{"columns": [...], "data": [...]}`, or undefined. */
function compactRowsSlice(b: Buffer, offset: number, blankLines: boolean): Buffer | undefined {
  let i = skipWs(b, offset);
  if (b[i] !== 0x7b) return undefined;
  i = expectKey(b, i + 1, 'columns');
  if (i < 0 || b[i] !== 0x5b) return undefined;
  i = skipWs(b, skipComposite(b, i));
  if (b[i] !== 0x2c) return undefined;
  i = expectKey(b, i + 1, 'data');
  if (i < 0 || b[i] !== 0x5b) return undefined;
  let e = b.length - 1;
  while (e > i && isWs(b[e])) e--;
  if (b[e] !== 0x7d) return undefined;
  e--;
  while (e > i && isWs(b[e])) e--;
  if (b[e] !== 0x5d) return undefined;
  return cleanSlice(b, i + 1, e, blankLines);
}

/**
 * A canonical compact body's column list and rows, found from its bytes alone (no JSON.parse):
 * for staging a large request's rows while it is parsed and checked (stage-area.ts). Undefined when
 * the body is not plainly `{"columns": [...], "data": [...]}` or has a blank line. The rows are the
 * same view of the body `parseIngestBody` answers as the passthrough, so the two can be compared.
 */
export function compactBodyRows(body: Buffer): { columns: string[]; rows: Buffer } | undefined {
  const offset = bomLength(body);
  if (hasBlankLineBytes(body)) return undefined;
  let i = skipWs(body, offset);
  if (body[i] !== 0x7b) return undefined;
  i = expectKey(body, i + 1, 'columns');
  if (i < 0 || body[i] !== 0x5b) return undefined;
  const end = skipComposite(body, i);
  if (end < 0) return undefined;
  let columns: unknown;
  try {
    columns = JSON.parse(body.toString('utf8', i, end));
  } catch {
    return undefined;
  }
  if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string')) return undefined;
  const rows = compactRowsSlice(body, offset, false);
  return rows ? { columns, rows } : undefined;
}

/**
 * An NDJSON body's bytes for the engine (JSONEachRow), found without parsing: the same view of
 * the body `parseIngestBody` answers as the passthrough. Undefined for a body with a blank line or
 * one not starting with an object.
 */
export function streamingBodyRows(body: Buffer): Buffer | undefined {
  if (hasBlankLineBytes(body)) return undefined;
  const offset = bomLength(body);
  if (body[skipWs(body, offset)] !== 0x7b) return undefined;
  return cleanSlice(body, offset, body.length, false);
}

function bomLength(body: Buffer): number {
  return body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
}

/** A newline followed by whitespace holding another newline (as hasBlankLine, on the bytes). */
function hasBlankLineBytes(body: Buffer): boolean {
  for (let nl = body.indexOf(0x0a); nl >= 0; nl = body.indexOf(0x0a, nl + 1)) {
    const next = skipWs(body, nl + 1);
    if (body.lastIndexOf(0x0a, next - 1) > nl) return true;
  }
  return false;
}

function parseCompact(body: Buffer, charset: string, lossless = false): ParsedRows {
  const { text, utf8, offset } = decode(body, charset);
  if (text.trim() === '') malformed('the body is empty; expected {"columns": [...], "data": [[...], ...]}');
  const doc = parseJson(text, lossless) as { columns?: unknown; data?: unknown } | null;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    malformed('expected an object {"columns": [...], "data": [[...], ...]}');
  }
  const { columns, data } = doc;
  if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string')) {
    malformed('"columns" must be an array of column names');
  }
  if (!Array.isArray(data)) malformed('"data" must be an array of rows');
  const keys = Object.keys(doc);
  const canonical = utf8 && keys.length === 2 && keys[0] === 'columns' && keys[1] === 'data';
  const passthrough = canonical ? compactRowsSlice(body, offset, hasBlankLine(text)) : undefined;
  // One literal, unset keys undefined: no spread objects per request.
  return {
    kind: 'compact',
    columns: columns as string[],
    rows: data as unknown[][],
    passthrough,
    // bind, not an arrow: the TypeScript loader names every arrow it sees assigned to a name
    // (a defineProperty per request on this path, ~1 µs in the 256-client profile).
    lossless: lossless ? undefined : compactLossless.bind(undefined, body, charset),
  };
}

/** parseCompact, losslessly: unnamed by the loader, so that binding it per request is cheap (fast-bind.ts). */
const compactLossless = bindable(
  (body: Buffer, charset: string): ParsedRows => parseCompact(body, charset, true),
);

/** Split concatenated JSON values (`{..}{..}`, NDJSON, with or without separators) into their texts. */
export function splitJsonValues(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x2c) {
      i++;
      continue;
    }
    const start = i;
    if (c === 0x7b || c === 0x5b) {
      let depth = 0;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x22) {
          for (i++; i < n; i++) {
            const e = text.charCodeAt(i);
            if (e === 0x5c) i++;
            else if (e === 0x22) break;
          }
        } else if (d === 0x7b || d === 0x5b) depth++;
        else if (d === 0x7d || d === 0x5d) {
          depth--;
          if (depth === 0) {
            i++;
            break;
          }
        }
      }
    } else if (c === 0x22) {
      for (i++; i < n; i++) {
        const e = text.charCodeAt(i);
        if (e === 0x5c) i++;
        else if (e === 0x22) {
          i++;
          break;
        }
      }
    } else {
      // A bare token (number, literal, or bytes that are no JSON) runs to the next JSON separator;
      // it takes at least one character, so any other whitespace (\v, \f, U+00A0) cannot stall it.
      i++;
      while (i < n && !/[ \t\r\n,{["]/.test(text[i] as string)) i++;
    }
    out.push(text.slice(start, i));
  }
  return out;
}

function tryParseArray(items: string): unknown[] | undefined {
  try {
    return JSON.parse(`[${items}]`) as unknown[];
  } catch {
    return undefined;
  }
}

function parseStreaming(body: Buffer, charset: string, lossless = false): ParsedRows {
  const { text, utf8, offset } = decode(body, charset);
  let objects: unknown[] | undefined;
  if (!lossless) {
    // One object per line (the usual NDJSON) joins with commas into one array; otherwise raw
    // newlines occur only between JSON tokens, so `}` newline `{` separates two objects.
    const t = text.trim();
    objects = tryParseArray(t.replaceAll('\n', ',')) ?? tryParseArray(t.replace(/}\s*\n\s*{/g, '},{'));
  }
  if (!objects) {
    // Objects not separated by newlines, a malformed one, or a lossless parse: one value at a time.
    objects = splitJsonValues(text).map((v, i) => parseJson(v, lossless, `row ${i + 1}: `));
  }
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i];
    if (o === null || typeof o !== 'object' || Array.isArray(o))
      malformed(`row ${i + 1} is not a JSON object`);
  }
  const passthrough =
    utf8 && objects.length > 0 ? cleanSlice(body, offset, body.length, hasBlankLine(text)) : undefined;
  return {
    kind: 'objects',
    objects,
    ...(passthrough ? { passthrough } : {}),
    ...(lossless ? {} : { lossless: streamingLossless.bind(undefined, body, charset) }),
  };
}

/** parseStreaming, losslessly (see compactLossless). */
const streamingLossless = bindable(
  (body: Buffer, charset: string): ParsedRows => parseStreaming(body, charset, true),
);

/** Parse an ingest body in `format` (charset from the Content-Type). Throws INGEST_MALFORMED. */
export function parseIngestBody(body: Buffer, format: IngestFormat, charset = 'utf-8'): ParsedRows {
  switch (format) {
    case 'compact':
      return parseCompact(body, charset);
    case 'streaming':
      return parseStreaming(body, charset);
    case 'raw': {
      const { text } = decode(body, charset);
      return { kind: 'compact', columns: ['raw'], rows: text.length > 0 ? [[text]] : [] };
    }
    case 'lines': {
      const { text } = decode(body, charset);
      const rows = text
        .split('\n')
        .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
        .filter((l) => l.length > 0)
        .map((l) => [l]);
      return { kind: 'compact', columns: ['raw'], rows };
    }
  }
}
