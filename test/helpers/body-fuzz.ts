/**
 * Structure-aware mutation of REST request bodies for the body fuzz test: valid bodies built from a
 * seeded PRNG, then fields deleted, retyped, nested deeply, replaced by huge numbers and strings,
 * invalid UTF-8, truncated, compressed badly or sent with the wrong Content-Type.
 */
import { deflateSync, gzipSync } from 'node:zlib';

/** mulberry32: a small seeded PRNG, the same sequence for the same seed on every machine. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

/** JSON text written as is (JavaScript cannot hold `1e400` or `-0.0e-999` as themselves). */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may contain Raw pieces. */
export function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Values no column should take without a clear answer: the retyped, the huge, the odd. */
export function nastyValue(r: Rng): unknown {
  switch (r.int(24)) {
    case 0:
      return new Raw(r.pick(['1e19', '1.18e21', '-1e19', '1e400', '-1e400', '1E+308', '4e-400', '-0.0']));
    case 1:
      return new Raw(r.pick(['9223372036854775808', '-9223372036854775809', '18446744073709551616']));
    case 2:
      return new Raw(`${r.chance(0.5) ? '-' : ''}${'9'.repeat(20 + r.int(300))}`);
    case 3:
      return r.pick(['NaN', 'nan', 'inf', '-Infinity', '1e19', '0x1F', '1_000', ' 12', '']);
    case 4:
      return r.chance(0.5);
    case 5:
      return null;
    case 6:
      return {};
    case 7:
      return [];
    case 8:
      return { a: [1, { b: 'c' }] };
    case 9:
      return deepArray(1 + r.int(3000));
    case 10:
      return 'x'.repeat(r.pick([1000, 70_000, 300_000]));
    case 11:
      return r.pick(['\u0000', '\ud800', '\udfff\ud800', 'é\u202e', '\n\n', '"', '\\']);
    case 12:
      return r.int(2 ** 31) - 2 ** 30;
    case 13:
      return r.next() * 10 ** r.int(40);
    case 14:
      return r.pick([
        '2024-13-45',
        '2024-02-30 25:61:61',
        'Jan 2 2024',
        '99999999999999999999',
        '1700000000',
      ]);
    case 15:
      return r.pick(['123e4567-e89b-12d3-a456-426614174000', 'zz', '1.2.3.4', '::1', '300.1.1.1']);
    case 16:
      return [1, 'two', null, [3]];
    case 17:
      return { '': 1, '\u0000': 2 };
    case 18:
      return new Raw(r.pick(['1.0', '1.5e3', '-0', '1e-400', '123456789.123456789']));
    case 19:
      return Number.MAX_SAFE_INTEGER + r.int(5);
    case 20:
      return -r.int(1000);
    case 21:
      return r.pick([['a', 1], [1, 'a'], [1], [1, 2, 3]]);
    case 22:
      return { k: r.pick([1, 'x', null, 1.5, true]) };
    default:
      return String(r.int(1000));
  }
}

function deepArray(depth: number): Raw {
  return new Raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
}

/** An object tree nested `depth` deep (for JSON routes). */
export function deepObject(depth: number): Raw {
  return new Raw(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
}

export interface ColumnType {
  name: string;
  type: string;
  valid: (r: Rng) => unknown;
}

const hex = (r: Rng, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[r.int(16)]).join('');

/** The columns of the fuzzed stream, with a generator of values each one takes. */
export const FUZZ_COLUMNS: readonly ColumnType[] = [
  { name: 'i8', type: 'int8', valid: (r) => r.int(256) - 128 },
  {
    name: 'i64',
    type: 'int64',
    valid: (r) => (r.chance(0.5) ? r.int(1e9) : String(BigInt(r.int(1e9)) * 10n ** 9n)),
  },
  { name: 'u64', type: 'uint64', valid: (r) => (r.chance(0.5) ? r.int(1e6) : '18446744073709551615') },
  {
    name: 'i128',
    type: 'int128',
    valid: (r) => (r.chance(0.5) ? new Raw('1e30') : '-1701411834604692317316873'),
  },
  { name: 'f32', type: 'float32', valid: (r) => r.next() * 1000 },
  { name: 'f64', type: 'float64', valid: (r) => r.pick([r.next(), 'inf', 'nan', '1e300']) },
  { name: 'd', type: 'decimal(10, 2)', valid: (r) => Math.round(r.next() * 1e6) / 100 },
  { name: 's', type: 'string', valid: (r) => r.pick(['a', 'é', '', 'x y', String(r.int(99))]) },
  { name: 'b', type: 'bool', valid: (r) => r.pick([true, false, 0, 1]) },
  { name: 'dd', type: 'date', valid: (r) => r.pick(['2024-01-02', 19000, '2000-02-29']) },
  {
    name: 'dt',
    type: 'datetime64(3)',
    valid: (r) => r.pick(['2024-01-02 03:04:05.678', '2024-01-02T03:04:05Z', 1700000000123]),
  },
  {
    name: 'u',
    type: 'uuid',
    valid: (r) => `${hex(r, 8)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 12)}`,
  },
  { name: 'ip', type: 'ipv4', valid: (r) => `${r.int(256)}.${r.int(256)}.${r.int(256)}.${r.int(256)}` },
  { name: 'arr', type: 'array(int32)', valid: (r) => Array.from({ length: r.int(4) }, () => r.int(1000)) },
  { name: 'm', type: 'map(string, int32)', valid: (r) => ({ k: r.int(100), [`x${r.int(9)}`]: r.int(9) }) },
  { name: 't', type: 'tuple(int32, string)', valid: (r) => [r.int(100), 'v'] },
  { name: 'n', type: 'nullable(int64)', valid: (r) => (r.chance(0.3) ? null : r.int(1e6)) },
  { name: 'lc', type: 'low_cardinality(string)', valid: (r) => r.pick(['red', 'green']) },
];

export interface FuzzRequest {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** For ingest: the stream, and how many rows the body holds if it was left valid. */
  ingest?: { stream: string; rows?: number };
  /** What was done to the body, for the failure message. */
  what: string;
}

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/vnd.timeplus+json;format=compat',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=klingon',
  'application/x-ndjson',
  '',
];

/** Byte-level damage of a body: truncation, invalid UTF-8, duplication, BOM, blank lines. */
function damage(r: Rng, body: Buffer): [Buffer, string] {
  switch (r.int(7)) {
    case 0:
      return [body.subarray(0, r.int(body.length + 1)), 'truncated'];
    case 1: {
      const b = Buffer.from(body);
      const at = r.int(b.length + 1);
      return [
        Buffer.concat([b.subarray(0, at), Buffer.from([0xff, 0xfe, 0xc3]), b.subarray(at)]),
        'invalid utf-8',
      ];
    }
    case 2:
      return [Buffer.concat([body, body]), 'doubled'];
    case 3:
      return [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]), 'bom'];
    case 4:
      return [Buffer.from(body.toString('utf8').replaceAll(',', ',\n\n')), 'blank lines'];
    case 5: {
      const b = Buffer.from(body);
      for (let i = 0; i < 3 && b.length > 0; i++) b[r.int(b.length)] = r.int(256);
      return [b, 'random bytes'];
    }
    default:
      return [Buffer.alloc(0), 'empty'];
  }
}

function row(r: Rng, columns: readonly ColumnType[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const c of columns) if (r.chance(0.7)) o[c.name] = c.valid(r);
  return o;
}

/** A valid or mutated ingest request into `stream` (columns FUZZ_COLUMNS). */
export function ingestRequest(r: Rng, stream: string, path: string): FuzzRequest {
  const n = r.pick([0, 1, 1, 2, 3, 10]);
  const objects = Array.from({ length: n }, () => row(r, FUZZ_COLUMNS));
  let rows: number | undefined = n;
  const what: string[] = [];
  // Value-level mutations keep the shape but usually make the request bad.
  if (n > 0 && r.chance(0.5)) {
    const o = objects[r.int(n)] as Record<string, unknown>;
    const c = r.pick(FUZZ_COLUMNS).name;
    const kind = r.int(4);
    if (kind === 0) o[c] = nastyValue(r);
    else if (kind === 1) o[r.pick(['nope', '_tp_sn', '', 'I64', '\u0000'])] = 1;
    else if (kind === 2) delete o[c];
    else o[c] = deepObject(1 + r.int(500));
    what.push(`value ${c} kind ${kind}`);
    if (kind !== 2) rows = undefined;
  }
  const format = r.pick(['compact', 'compact', 'streaming', 'streaming', 'query'] as const);
  let text: string;
  let type: string;
  let query = '';
  if (format === 'compact') {
    const cols = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    const data = objects.map((o) => cols.map((c) => (c in o ? o[c] : null)));
    const doc: Record<string, unknown> = { columns: cols, data };
    if (r.chance(0.25)) {
      const m = r.int(6);
      what.push(`compact shape ${m}`);
      rows = undefined;
      if (m === 0) delete doc[r.pick(['columns', 'data'])];
      else if (m === 1) doc.columns = nastyValue(r);
      else if (m === 2) doc.data = r.pick([{}, 'x', [1, 2], [[[]]], deepArray(2000)]);
      else if (m === 3) (doc.columns as unknown[]).push(r.pick(['i8', 'nope', 1]));
      else if (m === 4 && data.length > 0) (data[0] as unknown[]).pop();
      else doc.extra = 1;
    }
    text = toJson(doc);
    type = r.pick(['application/json', 'application/vnd.timeplus+json', 'application/json;format=compact']);
  } else {
    text = objects.map(toJson).join(r.pick(['\n', '', ' ', '\r\n', '\n\n']));
    type = r.pick(['application/x-ndjson', 'application/json;format=streaming', 'application/jsonl']);
    if (format === 'query') {
      type = 'application/json';
      query = '?format=streaming';
    }
  }
  let body: Buffer = Buffer.from(text);
  const headers: Record<string, string> = {};
  if (r.chance(0.1)) {
    [body, what[what.length]] = damage(r, body);
    if (body.length > 0) rows = undefined;
    else if (format === 'compact') rows = undefined;
    else rows = 0;
  }
  if (r.chance(0.08)) {
    type = r.pick(JSON_TYPES);
    what.push(`type ${type}`);
    rows = undefined;
  }
  if (r.chance(0.05)) {
    query = `?format=${r.pick(['raw', 'lines', 'nope', 'STREAMING', ''])}`;
    what.push(`query ${query}`);
    rows = undefined;
  }
  if (r.chance(0.1)) {
    const enc = r.pick(['gzip', 'gzip', 'deflate', 'gzip-truncated', 'br', 'gzip-undeclared']);
    what.push(`encoding ${enc}`);
    if (enc === 'gzip' || enc === 'deflate') {
      body = enc === 'gzip' ? gzipSync(body) : deflateSync(body);
      headers['content-encoding'] = enc;
    } else if (enc === 'gzip-truncated') {
      const z = gzipSync(body);
      body = z.subarray(0, Math.max(1, z.length - 1 - r.int(z.length)));
      headers['content-encoding'] = 'gzip';
      rows = undefined;
    } else if (enc === 'br') {
      headers['content-encoding'] = 'br';
      rows = undefined;
    } else {
      body = gzipSync(body);
      rows = undefined;
    }
  }
  if (type !== '') headers['content-type'] = type;
  return {
    method: 'POST',
    path: `${path}${query}`,
    headers,
    body,
    ingest: { stream, ...(rows !== undefined ? { rows } : {}) },
    what: `ingest ${format} ${what.join(', ')}`,
  };
}

/** A raw or lines ingest into a stream with one column `raw` (string or int64). */
export function rawIngestRequest(r: Rng, stream: string, path: string, intColumn: boolean): FuzzRequest {
  const lines = Array.from({ length: r.pick([0, 1, 2, 5]) }, () =>
    intColumn
      ? r.pick([String(r.int(1e6)), '-7', '9223372036854775807'])
      : r.pick(['a', 'é', '{"x":1}', ' ']),
  );
  let rows: number | undefined;
  const what: string[] = [];
  if (r.chance(0.4) && lines.length > 0) {
    lines[r.int(lines.length)] = r.pick([
      '1e19',
      '9223372036854775808',
      'abc',
      '\u0000',
      'x'.repeat(100_000),
      '1.5',
      'true',
    ]);
    what.push('bad line');
  }
  const asLines = r.chance(0.5);
  let body: Buffer = Buffer.from(lines.join(r.pick(['\n', '\r\n'])));
  if (r.chance(0.1)) {
    [body, what[what.length]] = damage(r, body);
  }
  const text = body.toString('utf8');
  const oneValue = !intColumn || asLines || lines.length <= 1; // a raw body is one value
  if (oneValue && (what.length === 0 || (what.length === 1 && what[0] === 'bad line' && !intColumn))) {
    rows = asLines
      ? text.split('\n').filter((l) => l.replace(/\r$/, '').length > 0).length
      : text.length > 0
        ? 1
        : 0;
  }
  return {
    method: 'POST',
    path,
    headers: { 'content-type': asLines ? 'text/plain;format=lines' : 'text/plain' },
    body,
    ingest: { stream, ...(rows !== undefined ? { rows } : {}) },
    what: `ingest ${asLines ? 'lines' : 'raw'} ${what.join(', ')}`,
  };
}

const EXPRESSIONS = [
  'now()',
  "to_datetime('2024-01-01')",
  'a + 1',
  'to_datetime(t) + INTERVAL 1 DAY',
  "concat(s, 'x')",
  '(a, s)',
  'ZSTD(1)',
  'CODEC(Delta(8), LZ4)',
  'bloom_filter(0.01) GRANULARITY 2',
];

/** A SQL fragment: valid, truncated, garbled, deeply nested or long. */
function fragment(r: Rng): unknown {
  const e = r.pick(EXPRESSIONS);
  switch (r.int(8)) {
    case 0:
      return e.slice(0, r.int(e.length));
    case 1:
      return `${e}${r.pick([')', '(', ',', "'", '`', ' +', ';DROP STREAM fz_all', '\u0000'])}`;
    case 2:
      return `${'('.repeat(100 + r.int(900))}1${')'.repeat(r.int(1000))}`;
    case 3:
      return nastyValue(r);
    case 4:
      return 'x'.repeat(r.pick([300, 70_000]));
    default:
      return e;
  }
}

/** A stream create body (POST /v1beta2/streams), valid or mutated. */
export function createStreamRequest(r: Rng, name: string): FuzzRequest {
  const columns: Array<Record<string, unknown>> = [
    { name: 'a', type: r.pick(['int64', 'uint8', 'float64']) },
    { name: 's', type: 'string' },
    { name: 't', type: 'datetime64(3)' },
  ];
  const def: Record<string, unknown> = { name, columns };
  const what: string[] = [];
  // Mostly mutated: a create that succeeds costs the engine several statements.
  for (let k = r.chance(0.1) ? 0 : 1 + r.int(3); k > 0; k--) {
    const m = r.int(12);
    what.push(`m${m}`);
    const c = r.pick(columns);
    if (m === 0) c.default = fragment(r);
    else if (m === 1) def.ttl_expression = fragment(r);
    else if (m === 2) c.ttl_expression = fragment(r);
    else if (m === 3) c.codec = fragment(r);
    else if (m === 4) c.skipping_index_expression = fragment(r);
    else if (m === 5) {
      def.mode = r.pick(['versioned_kv', 'changelog_kv', 'changelog', 'nope', 1]);
      def.primary_key = fragment(r);
    } else if (m === 6) def.order_by_expression = fragment(r);
    else if (m === 7)
      c.type = r.pick([
        'int64(',
        'nope',
        'decimal(100, 2)',
        'fixed_string(0)',
        'array(',
        '',
        'map(string)',
        nastyValue(r),
      ]);
    else if (m === 8)
      def[r.pick(['name', 'columns', 'mode', 'event_time_column', 'logstore_retention_ms', 'shards'])] =
        nastyValue(r);
    else if (m === 9) delete (r.chance(0.5) ? def : c)[r.pick(['name', 'columns', 'type'])];
    else if (m === 10) def.event_time_column = fragment(r);
    else
      c.name = r.pick([
        '',
        '_tp_sn',
        '_tp_delta',
        'a',
        'window_start',
        'x'.repeat(300),
        '\u0000',
        nastyValue(r),
      ]);
  }
  return jsonRequest(r, 'POST', '/v1beta2/streams', def, `create ${what.join(' ')}`);
}

/** A PATCH of stream `name`. */
export function patchStreamRequest(r: Rng, name: string): FuzzRequest {
  const body: Record<string, unknown> = {};
  if (r.chance(0.6)) body.ttl_expression = r.chance(0.3) ? 'to_datetime(t) + INTERVAL 30 DAY' : fragment(r);
  if (r.chance(0.4)) body.description = r.chance(0.5) ? 'd' : nastyValue(r);
  if (r.chance(0.3)) body.logstore_retention_ms = r.chance(0.5) ? 3_600_000 : nastyValue(r);
  if (r.chance(0.2)) body.logstore_retention_bytes = nastyValue(r);
  if (r.chance(0.1)) body.unknown = 1;
  return jsonRequest(r, 'PATCH', `/v1beta2/streams/${name}`, body, 'patch');
}

const QUERIES = [
  'SELECT 1',
  'SELECT count() FROM table(fz_all)',
  'SELECT * FROM table(fz_all) LIMIT 2',
  "SELECT to_int64('1e19')",
  'SELECT sum(i64) FROM table(fz_all)',
];

/** A query body for POST /v1beta2/queries, /sqlanalyze or /format (historical SQL only). */
export function queryRequest(r: Rng): FuzzRequest {
  const path = r.pick(['/v1beta2/queries', '/v1beta2/sqlanalyze', '/v1beta2/format']);
  const body: Record<string, unknown> = { sql: r.pick(QUERIES) };
  const m = r.int(8);
  if (m === 0) body.sql = nastyValue(r);
  else if (m === 1) delete body.sql;
  else if (m === 2)
    body.batching_policy = r.pick([
      { count: nastyValue(r) },
      { time_ms: nastyValue(r) },
      nastyValue(r),
      { count: 1, time_ms: 0 },
    ]);
  else if (m === 3) body.tags = r.pick([nastyValue(r), ['a', 1], ['x'.repeat(1000)]]);
  else if (m === 4) body[r.pick(['name', 'description', 'type', 'extra'])] = small(nastyValue(r));
  else if (m === 5)
    body.sql = `${body.sql as string}${r.pick([' WHERE', ' LIMIT -1', ' LIMIT 1e19', " SETTINGS max_threads='x'", ';;', ' FORMAT JSON'])}`;
  return jsonRequest(r, 'POST', path, body, `query ${path} m${m}`);
}

/**
 * A value of at most a few KB: a query answers server-sent events, and through `inject` (no real
 * socket) an event over the stream's 16 KB high-water mark never drains, so the query would wait.
 */
function small(v: unknown): unknown {
  return typeof v === 'string' && v.length > 4000 ? v.slice(0, 4000) : v;
}

/** A user body: create (POST /v1beta2/users) or update (PATCH /v1beta2/users/{user}). */
export function userRequest(r: Rng, user: string): FuzzRequest {
  if (r.chance(0.5)) {
    // A password change that succeeds costs a scrypt hash: rare.
    const body: Record<string, unknown> = {
      password: r.chance(0.15) ? 'long-enough-pw' : r.pick(['short', nastyValue(r)]),
    };
    if (r.chance(0.5)) body.role = r.pick(['read_only', 'admin', 'root', nastyValue(r)]);
    return jsonRequest(r, 'PATCH', `/v1beta2/users/${user}`, body, 'user patch');
  }
  const body: Record<string, unknown> = {
    username: r.pick([`fz_u${r.int(1e6)}`, '', '1abc', 'a'.repeat(100), nastyValue(r)]),
    password: r.chance(0.15) ? 'long-enough-pw' : r.pick(['short', 'x'.repeat(2000), nastyValue(r)]),
  };
  if (r.chance(0.5)) body.role = r.pick(['read_only', 'admin', 'nope', nastyValue(r)]);
  if (r.chance(0.3)) delete body[r.pick(['username', 'password'])];
  return jsonRequest(r, 'POST', '/v1beta2/users', body, 'user create');
}

function jsonRequest(
  r: Rng,
  method: 'POST' | 'PATCH',
  path: string,
  value: unknown,
  what: string,
): FuzzRequest {
  let body: Buffer = Buffer.from(r.chance(0.03) ? toJson(deepObject(5000 + r.int(50_000))) : toJson(value));
  let type = 'application/json';
  const notes = [what];
  if (r.chance(0.1)) {
    [body, notes[notes.length]] = damage(r, body);
  }
  if (r.chance(0.08)) {
    type = r.pick(JSON_TYPES);
    notes.push(`type ${type}`);
  }
  return { method, path, headers: type ? { 'content-type': type } : {}, body, what: notes.join(', ') };
}
